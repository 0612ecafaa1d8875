/// Crockford's base32 (https://www.crockford.com/base32.html): 32 symbols, digits and
/// letters without I, L, O and U, so a code read aloud or typed by hand survives the usual
/// confusions. Decoding is forgiving the way the spec says: case is ignored, `O` reads as
/// `0`, `I` and `L` as `1`, and hyphens (and, here, spaces) are dropped.
public enum CrockfordBase32 {
    /// The symbols, by value.
    public static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    /// `count` random symbols from the CSPRNG, each uniform (no modulo bias).
    public static func randomSymbols(count: Int) throws -> String {
        var text = ""
        text.reserveCapacity(count)
        for _ in 0..<count {
            text.append(alphabet[Int(try SecureRandom.uniform(below: 32))])
        }
        return text
    }

    /// `bytes` as symbols, five bits each, most significant first; a last partial group
    /// is padded with zero bits (no padding symbols).
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var text = ""
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                text.append(alphabet[Int((buffer >> UInt32(bits)) & 31)])
            }
            buffer &= (1 << UInt32(bits)) - 1
        }
        if bits > 0 { text.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return text
    }

    /// Typed input as canonical symbols: uppercased, `O`→`0`, `I`/`L`→`1`, hyphens and
    /// spaces removed. Nil when anything else remains (including `U`) or the input is over
    /// `maximumLength` characters before cleaning (a bound on hostile input).
    public static func normalise(_ typed: String, maximumLength: Int = 64) -> String? {
        guard typed.utf8.count <= maximumLength else { return nil }
        var result = ""
        for character in typed.uppercased() {
            switch character {
            case "-", " ", "\u{00A0}": continue
            case "O": result.append("0")
            case "I", "L": result.append("1")
            default:
                guard alphabet.contains(character) else { return nil }
                result.append(character)
            }
        }
        return result
    }
}
