"""Decodes a QR code drawn by `QRCode.rendered()` with ZXing (zxing-cpp), a standard
reader: the half-block text is turned back into a bitmap, scaled up, and read.

Usage: qr_decode.py FILE  (FILE holds the rendered text; prints the decoded text)
"""
import sys

import numpy as np
import zxingcpp


def bitmap(text: str, light_on_dark: bool = True) -> np.ndarray:
    rows = []
    for line in text.split("\n"):
        upper, lower = [], []
        for ch in line:
            upper.append(ch in "█▀")
            lower.append(ch in "█▄")
        rows.append(upper)
        rows.append(lower)
    width = max(len(r) for r in rows)
    lit = np.array([r + [False] * (width - len(r)) for r in rows], dtype=bool)
    light = lit if light_on_dark else ~lit
    # Quiet zone of 4 light modules, 8 pixels per module, dark = 0.
    light = np.pad(light, 4, constant_values=True)
    image = np.where(light, 255, 0).astype(np.uint8)
    return np.kron(image, np.ones((8, 8), dtype=np.uint8))


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as handle:
        text = handle.read()
    results = zxingcpp.read_barcodes(bitmap(text), formats=zxingcpp.BarcodeFormat.QRCode)
    if not results:
        print("no QR code found", file=sys.stderr)
        return 1
    sys.stdout.write(results[0].text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
