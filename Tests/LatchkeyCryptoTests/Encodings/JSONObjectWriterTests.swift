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
}
