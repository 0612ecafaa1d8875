import Foundation
@testable import Latchkey
import LatchkeyTestSupport
import Testing

/// The QR encoder, read back two ways: by a reader written here from the standard (format
/// information, unmasking, placement order, de-interleaving, segment parsing), and by
/// ZXing (zxing-cpp) from the rendered terminal text when python3 has it
/// (`pip install zxing-cpp`; `.ci/run` installs it when it can).
@Suite("QR codes for transfer codes")
struct QRCodeTests {
    static let texts: [(String, QRCode.ErrorCorrection)] = [
        ("7KQ-4M2-X9A", .medium),
        ("ABC-DEF-123", .low),
        ("ABC-DEF-123", .high),
        ("HELLO WORLD", .quartile),
        ("latchkey://import?code=7KQ-4M2-X9A", .medium),
        (String(repeating: "0123456789ABCDEF", count: 8), .medium),
        (String(repeating: "long text for a version 10 symbol. ", count: 6), .low),
        ("Grüße, 世界", .medium),
    ]

    @Test("read back from the module matrix", arguments: 0..<texts.count)
    func readBack(_ index: Int) throws {
        let (text, level) = Self.texts[index]
        let code = try QRCode(text: text, errorCorrection: level)
        #expect(code.size == code.version * 4 + 17)
        let decoded = try QRReader.read(code.modules)
        #expect(decoded.level == level && decoded.mask == code.mask, "\(text)")
        #expect(decoded.text == text, "version \(code.version)")
    }

    @Test("too long a text is refused with a typed error")
    func tooLong() {
        #expect(throws: LatchkeyError.self) { try QRCode(text: String(repeating: "x", count: 400)) }
    }

    @Test("QR codes rendered in half blocks (transfer codes, and versions up to 10) decode with ZXing",
          .requires("python3 with zxing-cpp not found: skipped") { await PythonInterop.available(["zxingcpp", "numpy"]) })
    func zxingDecodesRenderedText() async throws {
        let cases = [("7KQ-4M2-X9A", QRCode.ErrorCorrection.medium), ("0AB-CDE-FGH", .medium)] + Self.texts
        for (text, level) in cases {
            let rendered: String
            if let code = TransferCode(text) {
                rendered = try code.qrCode().rendered()
            } else {
                rendered = try QRCode(text: text, errorCorrection: level).rendered()
            }
            let file = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("qr-\(UUID().uuidString).txt")
            defer { try? FileManager.default.removeItem(at: file) }
            try rendered.write(to: file, atomically: true, encoding: .utf8)
            let (status, output) = try await PythonInterop.run("qr_decode.py", [file.path])
            #expect(status == 0 && output == text, "\(output)")
        }
    }

    @Test("transfer codes normalise typed input")
    func transferCodes() throws {
        #expect(TransferCode("7kq 4m2 x9a")?.displayed == "7KQ-4M2-X9A")
        #expect(TransferCode("OIL-ABC-DEF")?.displayed == "011-ABC-DEF")
        #expect(TransferCode("7KQ--4M2--X9A")?.symbols == "7KQ4M2X9A")
        #expect(TransferCode("7KQ-4M2-X9U") == nil)
        #expect(TransferCode("7KQ-4M2-X9") == nil)
        #expect(TransferCode("7KQ-4M2-X9A1") == nil)
        #expect(TransferCode("7KQ-4M2-X9!") == nil)
        #expect(TransferCode(String(repeating: "-", count: 500) + "7KQ4M2X9A") == nil)
    }
}

/// A QR reader for clean matrices, from ISO/IEC 18004: it shares with the encoder only the
/// block table and the function-pattern map.
enum QRReader {
    struct Failure: Error { var reason: String }

    static func read(_ modules: [[Bool]]) throws -> (text: String, level: QRCode.ErrorCorrection, mask: Int) {
        let size = modules.count
        let version = (size - 17) / 4
        // Format information, first copy (§7.9.1).
        var bits = 0
        func module(_ x: Int, _ y: Int) -> Int { modules[y][x] ? 1 : 0 }
        var positions: [(Int, Int)] = (0...5).map { (8, $0) }
        positions += [(8, 7), (8, 8), (7, 8)]
        positions += (9..<15).map { (14 - $0, 8) }
        for (index, (x, y)) in positions.enumerated() { bits |= module(x, y) << index }
        bits ^= 0x5412
        let data = bits >> 10
        var check = data
        for _ in 0..<10 { check = (check << 1) ^ ((check >> 9) * 0x537) }
        guard (data << 10 | check) == bits else { throw Failure(reason: "format information does not check") }
        let level: QRCode.ErrorCorrection = switch data >> 3 {
        case 1: .low
        case 0: .medium
        case 3: .quartile
        default: .high
        }
        let mask = data & 7

        var functions = QRCode.Matrix(version: version)
        functions.drawFunctionPatterns()
        var stream: [Bool] = []
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            for vertical in 0..<size {
                for offset in 0..<2 {
                    let x = right - offset
                    let y = (right + 1) & 2 == 0 ? size - 1 - vertical : vertical
                    guard !functions.isFunction[y][x] else { continue }
                    let flip = switch mask {
                    case 0: (x + y) % 2 == 0
                    case 1: y % 2 == 0
                    case 2: x % 3 == 0
                    case 3: (x + y) % 3 == 0
                    case 4: (x / 3 + y / 2) % 2 == 0
                    case 5: x * y % 2 + x * y % 3 == 0
                    case 6: (x * y % 2 + x * y % 3) % 2 == 0
                    default: ((x + y) % 2 + x * y % 3) % 2 == 0
                    }
                    stream.append(modules[y][x] != flip)
                }
            }
            right -= 2
        }
        var codewords: [UInt8] = []
        for start in stride(from: 0, to: stream.count - 7, by: 8) {
            var byte: UInt8 = 0
            for offset in 0..<8 { byte = byte << 1 | (stream[start + offset] ? 1 : 0) }
            codewords.append(byte)
        }
        // De-interleave the data codewords (§7.6).
        let layout = QRCode.layout(version: version, level)
        let sizes = layout.groups.flatMap { Array(repeating: $0.data, count: $0.blocks) }
        var blocks = sizes.map { _ in [UInt8]() }
        var index = 0
        for column in 0..<(sizes.max() ?? 0) {
            for block in blocks.indices where column < sizes[block] {
                blocks[block].append(codewords[index])
                index += 1
            }
        }
        var dataBits: [Bool] = []
        for byte in blocks.joined() {
            for shift in stride(from: 7, through: 0, by: -1) { dataBits.append((byte >> UInt8(shift)) & 1 == 1) }
        }
        var cursor = 0
        func take(_ count: Int) -> Int {
            defer { cursor += count }
            var value = 0
            for offset in 0..<count { value = value << 1 | (dataBits[cursor + offset] ? 1 : 0) }
            return value
        }
        let mode = take(4)
        switch mode {
        case 0b0010:
            let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:")
            let count = take(version < 10 ? 9 : 11)
            var text = ""
            for _ in 0..<count / 2 {
                let pair = take(11)
                text.append(alphabet[pair / 45])
                text.append(alphabet[pair % 45])
            }
            if count % 2 == 1 { text.append(alphabet[take(6)]) }
            return (text, level, mask)
        case 0b0100:
            let count = take(version < 10 ? 8 : 16)
            let bytes = (0..<count).map { _ in UInt8(take(8)) }
            return (String(decoding: bytes, as: UTF8.self), level, mask)
        default:
            throw Failure(reason: "unexpected mode \(mode)")
        }
    }
}
