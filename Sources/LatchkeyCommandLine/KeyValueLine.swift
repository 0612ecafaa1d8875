#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import LatchkeyProtocol

/// The `key = value` lines of the command's small configuration files (`pam.conf`,
/// `links.conf`): blank lines and `#` comments skipped, no control characters, no empty
/// or overlong value. Each line is handed over with its number, so a refusal names it.
struct KeyValueLine {
    var number: Int
    var key: String
    var value: String

    /// A refusal that names the file and this line.
    func refusal(_ why: String, path: String) -> CommandFailure {
        CommandFailure("\(path.displaySafe(maximumLength: 256)), line \(number): \(why)")
    }

    static func parse(_ text: String, path: String, maximumValueLength: Int) throws -> [KeyValueLine] {
        var lines: [KeyValueLine] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingSpaces()
            if line.isEmpty || line.hasPrefix("#") { continue }
            let numbered = KeyValueLine(number: index + 1, key: "", value: "")
            guard let equals = line.firstIndex(of: "="), !line.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw numbered.refusal("not `key = value`", path: path)
            }
            let value = line[line.index(after: equals)...].trimmingSpaces()
            guard !value.isEmpty, value.utf8.count <= maximumValueLength else { throw numbered.refusal("an empty or overlong value", path: path) }
            lines.append(KeyValueLine(number: index + 1, key: line[..<equals].trimmingSpaces(), value: value))
        }
        return lines
    }
}
