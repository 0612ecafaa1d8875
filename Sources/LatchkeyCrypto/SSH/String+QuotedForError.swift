#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension String {
    /// A name from the wire, quoted and cut short for an error message: printable ASCII
    /// as it is, anything else as `\u{…}`, so a forged name cannot drive a terminal.
    var quotedForError: String {
        var result = "\""
        for scalar in unicodeScalars.prefix(64) {
            if scalar.isASCII, scalar.value >= 0x20, scalar.value < 0x7F, scalar != "\"", scalar != "\\" {
                result.unicodeScalars.append(scalar)
            } else {
                result += "\\u{\(String(scalar.value, radix: 16))}"
            }
        }
        return result + (unicodeScalars.count > 64 ? "…\"" : "\"")
    }
}
