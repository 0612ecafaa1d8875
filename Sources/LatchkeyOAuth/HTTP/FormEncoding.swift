import Foundation

/// `application/x-www-form-urlencoded` (HTML's form encoding, which RFC 6749 §4.1.3 and
/// Appendix B use): unreserved characters as they are, space as `+`, the rest
/// percent-encoded from UTF-8.
enum FormEncoding {
    static func encode(_ parameters: [(String, String)]) -> Data {
        Data(parameters.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&").utf8)
    }

    static func escape(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                result += "+"
            default:
                result += "%" + String(format: "%02X", byte)
            }
        }
        return result
    }
}
