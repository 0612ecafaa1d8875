#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import Glibc
import Latchkey
import LatchkeyProtocol

/// How `--json` output is written: `Encodable` values, keys sorted, slashes unescaped,
/// every `Date` in RFC 3339 UTC as the protocol writes times (`AuditEvent.formatTime`),
/// so every command's `--json` names a time one way;
/// a document pretty-printed, an event stream one object per line (written at once, so
/// whoever reads a long-running command sees each line when it happens).
///
/// Values stay exact, but every scalar unsafe on a terminal
/// (`Unicode.Scalar.isUnsafeOnTerminal`) is written as a `\uXXXX` escape (RFC 8259 §7):
/// JSONEncoder escapes C0 controls itself but writes DEL, C1 controls and bidi controls
/// raw, and `--json` output is often read on a terminal too.
package enum JSONOutput {
    static func data(_ value: some Encodable, pretty: Bool) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(AuditEvent.formatTime(date))
        }
        return Data(escapingUnsafeScalars(String(decoding: try encoder.encode(value), as: UTF8.self)).utf8)
    }

    /// `json` with each scalar unsafe on a terminal as `\uXXXX` (a surrogate pair above
    /// U+FFFF). JSONEncoder already escapes every C0 control inside strings, so a raw line
    /// feed, tab or carriage return is the document's own whitespace and is kept; any other
    /// such scalar can only be inside a string, where the escape means the same.
    static func escapingUnsafeScalars(_ json: String) -> String {
        var escaped = String.UnicodeScalarView()
        for scalar in json.unicodeScalars {
            guard scalar.isUnsafeOnTerminal, !["\n", "\t", "\r"].contains(scalar) else {
                escaped.append(scalar)
                continue
            }
            for unit in String(scalar).utf16 {
                escaped.append(contentsOf: "\\u\(String(unit, radix: 16, uppercase: false).leftPadded(to: 4))".unicodeScalars)
            }
        }
        return String(escaped)
    }

    /// One pretty-printed document on standard output, written at once rather than
    /// through stdio's buffer.
    static func print(_ value: some Encodable) throws {
        FileDescriptorIO.write(STDOUT_FILENO, try data(value, pretty: true) + Data("\n".utf8))
    }

    /// One compact line on standard output, unbuffered.
    package static func printLine(_ value: some Encodable) throws {
        FileDescriptorIO.write(STDOUT_FILENO, try data(value, pretty: false) + Data("\n".utf8))
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
