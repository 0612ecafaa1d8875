import Foundation
import LatchkeyCrypto
import Testing

/// ``JSONObjectWriter`` writes what `JSONEncoder` with sorted keys and unescaped slashes
/// writes, byte for byte: the answers it replaces must not change on the wire.
@Suite("JSON object writer")
struct JSONObjectWriterTests {
    private static func reference(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Every ASCII character alone, then strings an attacker would send: quotes and
    /// backslashes, terminal escapes, bidi overrides, a NUL, invalid-looking escapes, astral
    /// scalars.
    static let hostile: [String] = (0..<0x80).map { String(UnicodeScalar(UInt8($0))) } + [
        "", "a\"b\\c", "\u{0}\u{1B}[2J\u{7}", "\u{202E}evil\u{202C}", "\\u0000", "</script>", "é€😀", "line\r\nbreak\tand\u{8}\u{C}",
        String(repeating: "\u{1F}", count: 300),
    ]

    @Test("a string is quoted as JSONEncoder quotes it, for every ASCII character and hostile text")
    func quoting() throws {
        for text in Self.hostile {
            let expected = try Self.reference([text])
            #expect("[" + JSONObjectWriter.quoted(text) + "]" == expected, "\(Array(text.unicodeScalars.map(\.value)))")
            #expect(try JSONDecoder().decode(String.self, from: Data(JSONObjectWriter.quoted(text).utf8)) == text)
        }
    }

    private struct Sample: Encodable {
        var a: String
        var b: Int64?
        var c: [String]?
        var d: String?
        var e: Int
    }

    @Test("members written in key order equal JSONEncoder's sorted output; absent ones are left out")
    func members() throws {
        for text in Self.hostile {
            for (b, c, d) in [(Int64.min, [text, ""], text), (nil, nil, nil), (Int64.max, [], nil)] as [(Int64?, [String]?, String?)] {
                let sample = Sample(a: text, b: b, c: c, d: d, e: Int.max)
                var writer = JSONObjectWriter()
                writer.string("a", sample.a)
                writer.integer("b", ifPresent: sample.b)
                writer.strings("c", ifPresent: sample.c)
                writer.string("d", ifPresent: sample.d)
                writer.integer("e", sample.e)
                #expect(String(decoding: writer.finishedBytes(), as: UTF8.self) == (try Self.reference(sample)))
            }
        }
        #expect(JSONObjectWriter().finished() == Data("{}".utf8))
    }

    private struct Nested: Encodable {
        var inner: [String: String]
        var list: [[String: String]]
    }

    @Test("finished JSON nests as an object member and as array elements")
    func nesting() throws {
        var inner = JSONObjectWriter()
        inner.string("k", "v\"")
        let innerBytes = inner.finishedBytes()
        var outer = JSONObjectWriter()
        outer.json("inner", innerBytes)
        outer.jsonArray("list", [innerBytes, innerBytes])
        let expected = try Self.reference(Nested(inner: ["k": "v\""], list: [["k": "v\""], ["k": "v\""]]))
        #expect(String(decoding: outer.finishedBytes(), as: UTF8.self) == expected)
        var empty = JSONObjectWriter()
        empty.jsonArray("list", [])
        #expect(String(decoding: empty.finishedBytes(), as: UTF8.self) == #"{"list":[]}"#)
    }

    private struct Numbers: Encodable {
        var n: Double
    }

    @Test("a number reads back as the same Double; a whole one is spelled as JSONEncoder spells it; one JSON cannot spell is refused")
    func numbers() throws {
        let values: [Double] = [
            0, 1, -1, 0.5, -2.25, 1e-7, 1e20, 1e300, 9_007_199_254_740_991, 9_007_199_254_740_992, -9_007_199_254_740_994,
            1_796_000_000.123456, Date(timeIntervalSince1970: 1_796_000_000.5).timeIntervalSince1970, .ulpOfOne, .leastNonzeroMagnitude,
            .leastNormalMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 0.1 + 0.2,
        ]
        for value in values {
            var writer = JSONObjectWriter()
            try writer.number("n", value)
            let bytes = writer.finished()
            let text = String(decoding: bytes, as: UTF8.self)
            // Grammar (RFC 8259 §6) and value: both JSON readers take it back exactly.
            guard case .object(let members) = try JSONReader.parse(bytes), case .number(let spelled)? = members["n"] else {
                Issue.record("\(text) does not read back as a number")
                continue
            }
            #expect(Double(spelled) == value, "\(value) written as \(text)")
            #expect(try JSONDecoder().decode([String: Double].self, from: bytes)["n"] == value, "\(text)")
            if value == value.rounded(), abs(value) < 1e15 {
                #expect(text == (try Self.reference(Numbers(n: value))), "\(value)")
            }
        }
        for value in [Double.nan, .infinity, -.infinity] {
            var writer = JSONObjectWriter()
            #expect(throws: CryptoError.self, "\(value)") { try writer.number("n", value) }
        }
        var absent = JSONObjectWriter()
        try absent.number("n", ifPresent: nil)
        #expect(absent.finished() == Data("{}".utf8))
    }

    @Test("a map of strings is written with its names in byte order, as JSONEncoder sorts them, hostile names and values included")
    func stringMaps() throws {
        let map = Dictionary(uniqueKeysWithValues: Self.hostile.enumerated().map { ($0.element, Self.hostile[($0.offset + 7) % Self.hostile.count]) })
        for values in [map, [:], ["b": "2", "a": "1", "B": "0", "é": "x", "e": "y"]] {
            var writer = JSONObjectWriter()
            writer.strings("m", values)
            #expect(String(decoding: writer.finishedBytes(), as: UTF8.self) == (try Self.reference(["m": values])))
        }
    }
}
