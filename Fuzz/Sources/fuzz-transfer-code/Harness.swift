import Foundation
import Latchkey
import LatchkeyCrypto

/// Transfer-code normalisation: anything typed is a 9-symbol code or nil, and a code's
/// display form parses back to itself.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    if let code = TransferCode(text) {
        precondition(code.symbols.count == 9 && TransferCode(code.displayed) == code, "a code does not round-trip")
        _ = try? code.qrCode()
    }
    _ = CrockfordBase32.normalise(text)
    return 0
}
