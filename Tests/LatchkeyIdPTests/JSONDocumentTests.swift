import Foundation
@testable import LatchkeyIdP
import Testing

/// The provider's JSON writer against Foundation's parser: whatever it writes parses back
/// to the same values, with keys sorted and the escapes RFC 8259 §7 requires.
@Suite("Provider JSON output")
struct JSONDocumentTests {
    @Test("strings, integers, booleans, doubles, arrays, objects and spliced JSON round-trip")
    func roundTrip() throws {
        let text = "quote \" backslash \\ slash / newline \n tab \t bell \u{07} nul \u{00} é 🔑 \u{2028}"
        let document = JSONDocument.encode([
            "z": 1, "a": true, "u32": UInt32.max, "i64": Int64.min, "u8": UInt8(7), "m": false, "d": 2.5, "inf": Double.infinity, "text": text,
            "list": ["pop", "swk"], "mixed": [1, "two", ["three": 3]] as [Any],
            "nested": ["b": 2, "a": [String: Any]()] as [String: Any],
            "raw": JSONDocument.Raw(data: Data(#"{"challenge":"abc","n":[1,2]}"#.utf8)),
        ])
        let written = String(decoding: document, as: UTF8.self)
        #expect(written.hasPrefix(#"{"a":true,"d":2.5,"i64":-9223372036854775808,"inf":null,"list":["pop","swk"],"m":false,"mixed":[1,"two",{"three":3}],"nested":{"a":{},"b":2},"raw":{"challenge":"abc","n":[1,2]},"text":"#))
        #expect(written.contains(#"slash / newline \n tab \t bell \u0007 nul \u0000"#))
        let parsed = try #require(try JSONSerialization.jsonObject(with: document) as? [String: Any])
        #expect(parsed["text"] as? String == text)
        #expect(parsed["z"] as? Int == 1 && parsed["a"] as? Bool == true)
        // Regression: integers other than Int (a UInt32 signature counter) were written as null.
        #expect(written.contains(#""u32":4294967295"#) && written.contains(#""i64":-9223372036854775808"#) && written.contains(#""u8":7"#))
    }

    @Test("numbers and nulls parsed by JSONSerialization keep their kind when written back")
    func parsedValues() throws {
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(#"{"t":true,"f":false,"one":1,"zero":0,"half":0.5,"none":null}"#.utf8)) as? [String: Any])
        #expect(String(decoding: JSONDocument.encode(parsed), as: UTF8.self) == #"{"f":false,"half":0.5,"none":null,"one":1,"t":true,"zero":0}"#)
    }
}
