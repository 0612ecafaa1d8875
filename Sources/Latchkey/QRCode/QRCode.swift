/// A QR code (ISO/IEC 18004:2015), versions 1 to 10, in alphanumeric or byte mode: enough
/// for transfer codes and short URLs, written from the standard so no library is needed.
///
/// The encoder picks the smallest version that holds the text at the error-correction
/// level asked for, and the mask with the lowest penalty (§7.8.3).
public struct QRCode: Sendable {
    /// The error-correction level (§7.5.1): how much of the symbol may be lost.
    public enum ErrorCorrection: Sendable, CaseIterable {
        case low, medium, quartile, high

        /// The two format-information bits (§7.9.1, Table 12).
        var formatBits: Int {
            switch self {
            case .low: 1
            case .medium: 0
            case .quartile: 3
            case .high: 2
            }
        }
    }

    public let version: Int
    public let errorCorrection: ErrorCorrection
    public let mask: Int
    /// Modules by row, then column; true is dark.
    public let modules: [[Bool]]

    public var size: Int { modules.count }

    public static let maximumVersion = 10

    /// Encodes `text`: alphanumeric mode when every character is in that set (digits,
    /// capitals, space and `$%*+-./:`), else UTF-8 bytes.
    public init(text: String, errorCorrection: ErrorCorrection = .medium) throws {
        let segment = Segment(text)
        guard let version = (1...Self.maximumVersion).first(where: { segment.bitCount(version: $0) <= Self.dataCodewords(version: $0, errorCorrection) * 8 }) else {
            throw LatchkeyError.invalidArgument(reason: "the text is too long for a version \(Self.maximumVersion) QR code")
        }
        let data = segment.codewords(version: version, capacity: Self.dataCodewords(version: version, errorCorrection))
        let all = Self.interleave(data, version: version, errorCorrection)

        var matrix = Matrix(version: version)
        matrix.drawFunctionPatterns()
        matrix.drawCodewords(all)
        var best: (mask: Int, penalty: Int, matrix: Matrix)?
        for mask in 0..<8 {
            var candidate = matrix
            candidate.applyMask(mask)
            candidate.drawFormatBits(errorCorrection: errorCorrection, mask: mask)
            let penalty = candidate.penalty()
            if best == nil || penalty < best?.penalty ?? .max { best = (mask, penalty, candidate) }
        }
        self.version = version
        self.errorCorrection = errorCorrection
        mask = best?.mask ?? 0
        modules = best?.matrix.modules ?? []
    }
}

// MARK: Data

extension QRCode {
    /// One segment of text in the most compact mode that fits it (§7.4).
    struct Segment {
        static let alphanumericSet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:")

        let alphanumeric: Bool
        let bytes: [UInt8]

        init(_ text: String) {
            bytes = Array(text.utf8)
            alphanumeric = text.allSatisfy { Self.alphanumericSet.contains($0) }
        }

        /// Bits of the character count for the mode at this version (§7.4.1, Table 3).
        func countBits(version: Int) -> Int {
            alphanumeric ? (version < 10 ? 9 : 11) : (version < 10 ? 8 : 16)
        }

        func bitCount(version: Int) -> Int {
            let payload = alphanumeric ? (bytes.count / 2) * 11 + (bytes.count % 2) * 6 : bytes.count * 8
            let count = bytes.count
            guard count < 1 << countBits(version: version) else { return .max }
            return 4 + countBits(version: version) + payload
        }

        /// Mode, count, data, terminator, bit padding and pad codewords (§7.4.9, §7.4.10).
        func codewords(version: Int, capacity: Int) -> [UInt8] {
            var bits = BitBuffer()
            bits.append(alphanumeric ? 0b0010 : 0b0100, count: 4)
            bits.append(bytes.count, count: countBits(version: version))
            if alphanumeric {
                let values = bytes.map { byte in Self.alphanumericSet.firstIndex(of: Character(UnicodeScalar(byte))) ?? 0 }
                var index = 0
                while index + 1 < values.count {
                    bits.append(values[index] * 45 + values[index + 1], count: 11)
                    index += 2
                }
                if index < values.count { bits.append(values[index], count: 6) }
            } else {
                for byte in bytes { bits.append(Int(byte), count: 8) }
            }
            bits.append(0, count: min(4, capacity * 8 - bits.count))
            bits.append(0, count: (8 - bits.count % 8) % 8)
            var codewords = bits.bytes
            var pad: UInt8 = 0xEC
            while codewords.count < capacity {
                codewords.append(pad)
                pad = pad == 0xEC ? 0x11 : 0xEC
            }
            return codewords
        }
    }

    struct BitBuffer {
        private(set) var bits: [Bool] = []
        var count: Int { bits.count }

        mutating func append(_ value: Int, count: Int) {
            for shift in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) }
        }

        var bytes: [UInt8] {
            stride(from: 0, to: bits.count, by: 8).map { start in
                (0..<8).reduce(UInt8(0)) { byte, offset in
                    byte << 1 | (start + offset < bits.count && bits[start + offset] ? 1 : 0)
                }
            }
        }
    }
}
