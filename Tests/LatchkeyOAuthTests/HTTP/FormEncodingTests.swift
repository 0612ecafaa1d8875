import Foundation
import LatchkeyOAuth
import Testing

/// The form decoder every endpoint's parameters go through: hostile forms are refused with
/// their reason, and any text decodes as a plain reference decoder (split, then `+` and
/// `%XX` by hand) decodes it.
@Suite("Form decoding")
struct FormEncodingTests {
    /// The reference: WHATWG URL §5.1's steps, written the slow, obvious way.
    static func reference(_ text: String) -> Result<[String: String], FormEncoding.DecodingError> {
        var parameters: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            var decoded: [String] = []
            for part in [parts[0], parts.count > 1 ? parts[1] : ""] {
                var bytes: [UInt8] = []
                var utf8 = Array(part.utf8)[...]
                while let byte = utf8.popFirst() {
                    if byte == UInt8(ascii: "+") {
                        bytes.append(0x20)
                    } else if byte == UInt8(ascii: "%") {
                        guard utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16),
                              utf8.prefix(2).allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") })
                        else { return .failure(.malformed) }
                        bytes.append(value)
                        utf8 = utf8.dropFirst(2)
                    } else {
                        bytes.append(byte)
                    }
                }
                guard let string = String(validating: bytes, as: UTF8.self) else { return .failure(.malformed) }
                decoded.append(string)
            }
            guard parameters.updateValue(decoded[1], forKey: decoded[0]) == nil else { return .failure(.repeated(name: decoded[0])) }
        }
        return .success(parameters)
    }

    static func decode(_ text: String) -> Result<[String: String], FormEncoding.DecodingError> {
        Result { () throws(FormEncoding.DecodingError) in try FormEncoding.decode(text[...]) }
    }

    @Test("named hostile forms: bad escapes, bytes that are not UTF-8, repeated names, empty pairs")
    func hostile() {
        let cases: [(String, Result<[String: String], FormEncoding.DecodingError>)] = [
            ("a=%", .failure(.malformed)), ("a=%4", .failure(.malformed)), ("a=%G0", .failure(.malformed)), ("%zz=1", .failure(.malformed)),
            ("a=%C3%28", .failure(.malformed)), ("a=%FF", .failure(.malformed)), ("a=1&a=2", .failure(.repeated(name: "a"))),
            ("a=1&%61=2", .failure(.repeated(name: "a"))), ("&&a=1&&", .success(["a": "1"])), ("a", .success(["a": ""])),
            ("a==b", .success(["a": "=b"])), ("=x", .success(["": "x"])), ("a=%2B+%20", .success(["a": "+  "])), ("", .success([:])),
            ("a=%00%1B", .success(["a": "\u{0}\u{1B}"])), ("a=é", .success(["a": "é"])),
        ]
        for (text, expected) in cases {
            #expect(Self.decode(text) == expected, "\(text)")
            #expect(Self.reference(text) == expected, "reference: \(text)")
        }
    }

    @Test("encoding: unreserved characters kept, space as +, every other byte as upper-case %XX, pairs joined by & in order")
    func encoding() {
        let cases: [([(String, String)], String)] = [
            ([("a", "b c")], "a=b+c"), ([("k", "AZaz09-._~")], "k=AZaz09-._~"), ([("k", "+&=%/?#")], "k=%2B%26%3D%25%2F%3F%23"),
            ([("k", "é\u{0}\u{1B}\u{7F}")], "k=%C3%A9%00%1B%7F"), ([("k", "{\"a\":[1]}")], "k=%7B%22a%22%3A%5B1%5D%7D"),
            ([("a b", "1"), ("c", ""), ("", "2")], "a+b=1&c=&=2"), ([], ""), ([("k", "😀")], "k=%F0%9F%98%80"),
        ]
        for (parameters, expected) in cases {
            #expect(String(decoding: FormEncoding.encode(parameters), as: UTF8.self) == expected, "\(parameters)")
        }
    }

    @Test("random forms decode as the reference decodes them, and encoded parameters round-trip")
    func random() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ab=&%+2F0éz\u{1B} ".unicodeScalars)
        for _ in 0..<3000 {
            var text = ""
            for _ in 0..<Int.random(in: 0...24, using: &generator) {
                text.unicodeScalars.append(alphabet.randomElement(using: &generator)!)
            }
            #expect(Self.decode(text) == Self.reference(text), "\(text)")
            let parameters = [("n" + text, text), ("other", String(text.reversed()))]
            let encoded = String(decoding: FormEncoding.encode(parameters), as: UTF8.self)
            #expect(Self.decode(encoded) == .success(Dictionary(uniqueKeysWithValues: parameters)), "\(encoded)")
        }
    }

    /// The admin API's path segments (an identity's name, a client id) made of someone's
    /// text: nothing but ASCII letters, digits, `-` and `_` stays as it is, so no segment can
    /// read as `.` or `..`, end the path, or start a query.
    @Test("a path segment escapes dots, slashes, queries and letters outside ASCII")
    func pathSegment() {
        #expect(FormEncoding.escapePathSegment("alice_smith-2") == "alice_smith-2")
        #expect(FormEncoding.escapePathSegment("..") == "%2E%2E")
        #expect(FormEncoding.escapePathSegment(".") == "%2E")
        #expect(FormEncoding.escapePathSegment("a/b?c#d e%") == "a%2Fb%3Fc%23d%20e%25")
        #expect(FormEncoding.escapePathSegment("José") == "Jos%C3%A9")
        #expect(FormEncoding.escapePathSegment("") == "")
        for value in 0..<256 {
            let text = String(UnicodeScalar(UInt8(value)))
            let escaped = FormEncoding.escapePathSegment(text)
            #expect(escaped.utf8.allSatisfy { $0 < 0x80 && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: ".") }, "\(value)")
            #expect(escaped.removingPercentEncoding == text, "\(value)")
        }
    }
}
