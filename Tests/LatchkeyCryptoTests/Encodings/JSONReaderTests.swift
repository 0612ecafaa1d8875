import Foundation
import LatchkeyCrypto
import Testing

/// ``JSONReader`` reads what RFC 8259 allows and I-JSON keeps (no name twice, no lone
/// surrogate, UTF-8 only), as `JSONSerialization` reads it, and refuses the rest with a
/// typed error, never a crash.
@Suite("JSON reader")
struct JSONReaderTests {
    typealias Value = JSONReader.Value

    /// `JSONSerialization`'s reading of the same text, as a ``Value`` (numbers as their
    /// double, compared apart).
    static func reference(_ text: Data) -> Any? {
        try? JSONSerialization.jsonObject(with: text, options: [.fragmentsAllowed])
    }

    /// Whether `value` is what `JSONSerialization` read.
    static func same(_ value: Value, _ other: Any) -> Bool {
        switch value {
        case .object(let members):
            guard let other = other as? [String: Any], other.count == members.count else { return false }
            return members.allSatisfy { name, member in other[name].map { same(member, $0) } ?? false }
        case .array(let elements):
            guard let other = other as? [Any], other.count == elements.count else { return false }
            return zip(elements, other).allSatisfy { same($0, $1) }
        case .string(let text): return (other as? String) == text
        case .number(let text): return (other as? NSNumber).map { abs($0.doubleValue - Double(text)!) <= abs(Double(text)!) * 1e-12 } ?? false
        case .bool(let flag): return (other as? Bool) == flag
        case .null: return other is NSNull
        }
    }

    static func hasHugeNumber(_ value: Value) -> Bool {
        switch value {
        case .number(let text): return !(Double(text)?.isFinite ?? false)
        case .object(let members): return members.values.contains(where: hasHugeNumber)
        case .array(let elements): return elements.contains(where: hasHugeNumber)
        default: return false
        }
    }

    @Test("documents a WebAuthn client sends, and every kind of value, read as JSONSerialization reads them")
    func readsWhatSerializationReads() throws {
        let texts = [
            #"{"type":"webauthn.get","challenge":"AAEC","origin":"https://example.com","crossOrigin":false}"#,
            #"{"id":"x","rawId":"eA","response":{"clientDataJSON":"e30","authenticatorData":"AA","signature":"AA","userHandle":null},"clientExtensionResults":{},"type":"public-key"}"#,
            " \t\r\n{ \"a\" : [ 1 , -0.5e+3 , 2E-2 , 0 , true , false , null , \"\" , { } , [ ] ] } \n",
            #"["\u00e9\ud83d\ude00\n\t\\\/\"", "é€😀", "\u0000"]"#,
            "123", "-0", "\"text\"", "null", "[[[[[[[[]]]]]]]]",
        ]
        for text in texts {
            let data = Data(text.utf8)
            let value = try JSONReader.parse(data)
            let reference = try #require(Self.reference(data), "\(text)")
            #expect(Self.same(value, reference), "\(text): \(value)")
        }
    }

    @Test("what RFC 8259 or I-JSON forbids is refused with a typed error", arguments: [
        "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "{'a':1}", "01", "1.", ".5", "-", "1e", "+1", "0x10", "NaN", "Infinity",
        "tru", "nul", "[1 2]", "{\"a\":1}{}", "{} x", "\"unterminated", "\"bad \\x escape\"", "\"\\u12\"", "\"\\uZZZZ\"",
        "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"tab\there\"", "\"line\nbreak\"",
        "{\"a\":1,\"a\":2}", "{\"a\":1,\"\\u0061\":2}", "\u{FEFF}{}",
    ])
    func refusals(text: String) {
        #expect(throws: CryptoError.self, "\(text.debugDescription)") { try JSONReader.parse(Data(text.utf8)) }
    }

    @Test("bytes that are not UTF-8, in a string or outside one, are refused")
    func notUTF8() {
        for bytes in [[0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x5B, 0xFF, 0x5D], [0x22, 0x5C, 0x6E, 0xC0, 0xAF, 0x22]] as [[UInt8]] {
            #expect(throws: CryptoError.self, "\(bytes)") { try JSONReader.parse(Data(bytes)) }
        }
    }

    @Test("nesting is bounded: 32 levels read, 33 refused, 100,000 refused without exhausting the stack")
    func depth() throws {
        _ = try JSONReader.parse(Data((String(repeating: "[", count: 32) + String(repeating: "]", count: 32)).utf8))
        #expect(throws: CryptoError.self) { try JSONReader.parse(Data((String(repeating: "[", count: 33) + String(repeating: "]", count: 33)).utf8)) }
        #expect(throws: CryptoError.self) { try JSONReader.parse(Data(String(repeating: "{\"a\":", count: 100_000).utf8)) }
    }

    /// A random value and a text for it, with random whitespace and escapes.
    struct Generator {
        var random: SystemRandomNumberGenerator

        mutating func text(depth: Int) -> (Value, String) {
            switch Int.random(in: 0..<(depth > 3 ? 4 : 6), using: &random) {
            case 0:
                let text = string()
                return (.string(text), quoted(text))
            case 1:
                let number = ["0", "-1", "12.5", "3e2", "-0.25E-3", "7"].randomElement(using: &random)!
                return (.number(number), number)
            case 2:
                let flag = Bool.random(using: &random)
                return (.bool(flag), flag ? "true" : "false")
            case 3:
                return (.null, "null")
            case 4:
                var members: [String: Value] = [:]
                var parts: [String] = []
                for _ in 0..<Int.random(in: 0..<5, using: &random) {
                    let name = string()
                    guard members[name] == nil else { continue }
                    let (value, text) = self.text(depth: depth + 1)
                    members[name] = value
                    parts.append(space() + quoted(name) + space() + ":" + space() + text + space())
                }
                return (.object(members), "{" + space() + parts.joined(separator: ",") + "}")
            default:
                var elements: [Value] = []
                var parts: [String] = []
                for _ in 0..<Int.random(in: 0..<5, using: &random) {
                    let (value, text) = self.text(depth: depth + 1)
                    elements.append(value)
                    parts.append(space() + text + space())
                }
                return (.array(elements), "[" + space() + parts.joined(separator: ",") + "]")
            }
        }

        mutating func space() -> String {
            ["", "", " ", "\n", "\t ", "\r\n"].randomElement(using: &random)!
        }

        mutating func string() -> String {
            let pieces = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\u{1}", "\u{7F}", "é", "€", "😀", "\u{202E}", "\u{0}"]
            return (0..<Int.random(in: 0..<8, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
        }

        /// Each scalar written plain, as a short escape or as `\u` (pairs for astral ones).
        mutating func quoted(_ text: String) -> String {
            var out = "\""
            for scalar in text.unicodeScalars {
                let escaped: String
                if scalar.value < 0x10000 {
                    escaped = String(format: "\\u%04x", scalar.value)
                } else {
                    let value = scalar.value - 0x10000
                    escaped = String(format: "\\u%04X\\u%04X", 0xD800 + (value >> 10), 0xDC00 + (value & 0x3FF))
                }
                switch scalar {
                case "\"": out += Bool.random(using: &random) ? "\\\"" : escaped
                case "\\": out += Bool.random(using: &random) ? "\\\\" : escaped
                case "\n": out += Bool.random(using: &random) ? "\\n" : escaped
                case "/": out += Bool.random(using: &random) ? "\\/" : "/"
                default: out += scalar.value < 0x20 || Bool.random(using: &random) ? escaped : String(scalar)
                }
            }
            return out + "\""
        }
    }

    @Test("2,000 random documents read back to the value they were written from, as JSONSerialization reads them")
    func randomDocuments() throws {
        var generator = Generator(random: SystemRandomNumberGenerator())
        for _ in 0..<2_000 {
            let (value, text) = generator.text(depth: 0)
            let data = Data(text.utf8)
            let read = try JSONReader.parse(data)
            #expect(read == value, "\(text)")
            let reference = try #require(Self.reference(data), "\(text)")
            #expect(Self.same(read, reference), "\(text)")
        }
    }

    @Test("20,000 random corruptions never crash, and whatever is read JSONSerialization reads alike")
    func corruptions() throws {
        var generator = Generator(random: SystemRandomNumberGenerator())
        let alphabet = Array("{}[]:,\"\\ tfn0-9.eE+u\u{0}".utf8) + [0xFF, 0xC3, 0xED]
        for _ in 0..<20_000 {
            var bytes = Array(generator.text(depth: 0).1.utf8)
            for _ in 0..<Int.random(in: 1...3) {
                guard !bytes.isEmpty else { break }
                let at = Int.random(in: 0..<bytes.count)
                switch Int.random(in: 0..<3) {
                case 0: bytes[at] = alphabet.randomElement()!
                case 1: bytes.remove(at: at)
                default: bytes.insert(alphabet.randomElement()!, at: at)
                }
            }
            let data = Data(bytes)
            guard let read = try? JSONReader.parse(data) else { continue }
            // A number past Double's range (a digit inserted into an exponent) is text to
            // this reader, and JSONSerialization may refuse it: the one difference allowed.
            if Self.reference(data) == nil, Self.hasHugeNumber(read) { continue }
            let reference = try #require(Self.reference(data), "read by JSONReader only: \(String(decoding: bytes, as: UTF8.self).debugDescription)")
            #expect(Self.same(read, reference), "\(String(decoding: bytes, as: UTF8.self).debugDescription)")
        }
    }
}
