import Foundation

/// The provider's JSON output (RFC 8259): response bodies and ID-token claims, written
/// directly from the dictionaries the routes build, keys sorted so output is stable.
///
/// `JSONSerialization` did this before, and profiling the full authentication showed it
/// as the provider's largest cost: on Linux it bridges every dictionary to `NSDictionary`
/// and sorts keys through `NSString` comparison. The provider only ever writes strings,
/// integers (of any width), booleans, arrays and objects of those, and JSON it has already encoded
/// (WebAuthn options from `JSONEncoder`), which ``Raw`` splices in unparsed, plus what
/// `JSONSerialization` parsed (`NSNumber`, `NSNull`) when a route echoes it.
enum JSONDocument {
    /// JSON text that is already encoded, written as it is.
    struct Raw {
        let data: Data
    }

    /// `object` as JSON text. A value of a type outside the list above is written as
    /// `null` (the routes never build one; this keeps a mistake from becoming a crash).
    static func encode(_ object: [String: Any]) -> Data {
        var output: [UInt8] = []
        output.reserveCapacity(512)
        write(object, to: &output)
        return Data(output)
    }

    private static func write(_ value: Any, to output: inout [UInt8]) {
        switch value {
        case let number as NSNumber where type(of: value) is NSNumber.Type:
            // A number parsed by JSONSerialization and passed back out (Swift values are
            // not NSNumbers here, and an NSNumber 1 would otherwise match `Bool`).
            if String(cString: number.objCType) == "c" {
                output += number.boolValue ? Array("true".utf8) : Array("false".utf8)
            } else {
                output += number.stringValue.utf8
            }
        case is NSNull:
            output += "null".utf8
        case let string as String:
            write(string: string, to: &output)
        case let bool as Bool:
            output += bool ? Array("true".utf8) : Array("false".utf8)
        case let integer as any BinaryInteger:
            // Every width: a credential's signature counter is a UInt32, and writing it as
            // `null` broke the admin API's credential list (the soak's checker caught it).
            output += String(describing: integer).utf8
        case let double as Double:
            output += double.isFinite ? Array(String(double).utf8) : Array("null".utf8)
        case let raw as Raw:
            output += raw.data
        case let strings as [String]:
            output.append(UInt8(ascii: "["))
            for (index, element) in strings.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                write(string: element, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case let object as [String: Any]:
            output.append(UInt8(ascii: "{"))
            for (index, member) in object.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                write(string: member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                write(member.value, to: &output)
            }
            output.append(UInt8(ascii: "}"))
        case let array as [Any]:
            output.append(UInt8(ascii: "["))
            for (index, element) in array.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                write(element, to: &output)
            }
            output.append(UInt8(ascii: "]"))
        default:
            output += "null".utf8
        }
    }

    /// A string with the escapes RFC 8259 §7 requires (quote, backslash, controls);
    /// everything else, `/` included, is written as its UTF-8.
    private static func write(string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): output += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: output += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: output += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: output += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x00..<0x20:
                let digits = Array("0123456789abcdef".utf8)
                output += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
