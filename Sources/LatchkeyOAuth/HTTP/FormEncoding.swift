#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// `application/x-www-form-urlencoded` (WHATWG URL §5, HTML's form encoding, which RFC
/// 6749 §4.1.3 and Appendix B use): unreserved characters as they are, space as `+`, the
/// rest percent-encoded from UTF-8. One encoder and one decoder for the client, the
/// reference provider and the tests.
public enum FormEncoding {
    /// Why a text is not a form: a malformed escape or a name or value that is not UTF-8
    /// once decoded, or a parameter that appears twice (RFC 6749 §3.1: parameters "MUST
    /// NOT be included more than once").
    public enum DecodingError: Error, Sendable, Equatable {
        case malformed
        case repeated(name: String)
    }

    /// `name=value` pairs joined by `&`, each side escaped by ``escape(_:)``. Written byte
    /// by byte into one buffer: a sign-in's assertion is a kilobyte of JSON, a hundred or so
    /// of whose bytes need escapes, and formatting each escape through Foundation was the
    /// client's costliest step of a sign-in after its transport (docs/PERFORMANCE.md,
    /// "The in-process provider since the store").
    public static func encode(_ parameters: [(String, String)]) -> Data {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(parameters.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 2 })
        for (index, (name, value)) in parameters.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: "&")) }
            append(name, to: &bytes)
            bytes.append(UInt8(ascii: "="))
            append(value, to: &bytes)
        }
        return Data(bytes)
    }

    /// The parameters of a query string or form body, each decoded exactly once (`+` is a
    /// space, `%XX` a byte).
    public static func decode(_ text: Substring) throws(DecodingError) -> [String: String] {
        // Over the text's contiguous UTF-8, by offsets: a sign-in posts three forms, one
        // carrying the assertion's JSON percent-encoded, and walking a Substring's UTF-8
        // view index by index cost more than the rest of the parse (docs/PERFORMANCE.md,
        // "Less per request").
        var text = text
        let parsed: Result<[String: String], DecodingError> = text.withUTF8 { bytes in
            var parameters: [String: String] = [:]
            var start = 0
            while start < bytes.count {
                let end = bytes[start...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.count
                if end > start {
                    let pair = UnsafeBufferPointer(rebasing: bytes[start..<end])
                    let separator = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.count
                    let valueStart = separator == pair.count ? separator : separator + 1
                    guard let name = unescape(UnsafeBufferPointer(rebasing: pair[..<separator])),
                          let value = unescape(UnsafeBufferPointer(rebasing: pair[valueStart...]))
                    else { return .failure(.malformed) }
                    guard parameters.updateValue(value, forKey: name) == nil else {
                        return .failure(.repeated(name: name))
                    }
                }
                start = end + 1
            }
            return .success(parameters)
        }
        return try parsed.get()
    }

    /// `encoded` with `+` as a space and `%XX` as its byte; nil for a `%` not followed by
    /// two hex digits, or bytes that are not UTF-8.
    package static func unescape(_ encoded: Substring.UTF8View.SubSequence) -> String? {
        var encoded = Substring(encoded)
        return encoded.withUTF8 { unescape($0) }
    }

    private static func unescape(_ encoded: UnsafeBufferPointer<UInt8>) -> String? {
        guard encoded.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else {
            return String(validating: encoded, as: UTF8.self)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(encoded.count)
        var index = 0
        while index < encoded.count {
            let byte = encoded[index]
            switch byte {
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard index + 2 < encoded.count, let upper = hexValue(encoded[index + 1]), let lower = hexValue(encoded[index + 2]) else {
                    return nil
                }
                bytes.append(upper << 4 | lower)
                index += 2
            default:
                bytes.append(byte)
            }
            index += 1
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `uri` with `items` appended to its query. URLComponents percent-encodes what a
    /// query may not hold but leaves `+` as it is, which a reader of the query as form
    /// encoding (WHATWG URL §5.1) would take for a space: it is escaped as `%2B` here.
    public static func url(_ uri: URLComponents, appending items: [(String, String)]) -> URL? {
        var components = uri
        components.queryItems = (components.queryItems ?? []) + items.map { URLQueryItem(name: $0.0, value: $0.1) }
        components.percentEncodedQuery = components.percentEncodedQuery?.replacing("+", with: "%2B")
        return components.url
    }

    /// `text` form-encoded: the unreserved characters as they are (RFC 3986 §2.3), space as
    /// `+`, every other UTF-8 byte as `%XX` in upper-case hex (RFC 3986 §2.1).
    static func escape(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        append(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `text` as one path segment: ASCII letters, digits, `-` and `_` as they are, every
    /// other UTF-8 byte as `%XX` (RFC 3986 §3.3). `.` and `~` are escaped too, so no
    /// segment made of someone's text can read as `.` or `..` (RFC 3986 §5.2.4), and a
    /// letter outside ASCII is escaped as its bytes.
    package static func escapePathSegment(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"):
                bytes.append(byte)
            default:
                appendEscaped(byte, to: &bytes)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func appendEscaped(_ byte: UInt8, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "%"))
        bytes.append(hexDigits[Int(byte >> 4)])
        bytes.append(hexDigits[Int(byte & 0x0F)])
    }

    private static func append(_ text: String, to bytes: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                bytes.append(byte)
            case UInt8(ascii: " "):
                bytes.append(UInt8(ascii: "+"))
            default:
                appendEscaped(byte, to: &bytes)
            }
        }
    }
}
