/// An integer in hexadecimal with leading zeros (`%08X` without `String(format:)`, which
/// goes through CoreFoundation's formatting and brings ICU's data into every binary that
/// links it: docs/PERFORMANCE.md, "The Debian package").
package enum HexadecimalText {
    package static func padded(_ value: some BinaryInteger, digits: Int, uppercase: Bool = false) -> String {
        let text = String(value, radix: 16, uppercase: uppercase)
        return String(repeating: "0", count: max(0, digits - text.utf8.count)) + text
    }
}
