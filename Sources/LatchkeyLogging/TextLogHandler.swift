public import Logging
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyProtocol

/// Text logs for `serve` (the default `--log-format text`) and the CLI: one line per event,
/// `time level logger: message key=value …` in logfmt's style, metadata sorted by key
/// (docs/ARCHITECTURE.md, "Operations").
public typealias TextLogHandler = LineLogHandler<TextLogFormat>

/// The line format of ``TextLogHandler``. Log lines carry values from outside: a
/// `client_id`, a user name, a path, a header. Each value, and the message, goes through
/// `String.logSafe(maximumLength:)`, so a value holding a newline cannot forge a line of
/// its own and one holding an escape sequence cannot drive the operator's terminal; a
/// value with a space, `=` or `"` is quoted, so it cannot pose as another field
/// (docs/SECURITY.md, "Logs").
public enum TextLogFormat: LogLineFormat {
    public static func line(level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String? {
        // Appended into one string, the time style made once: a sign-in logs two lines,
        // and interpolating each piece into a string of its own cost more than the rest
        // of the line (docs/PERFORMANCE.md, "Less per request").
        var line = time(Date())
        line.reserveCapacity(160 + message.utf8.count)
        line += " "
        line += level.rawValue
        line += " "
        line += label.logSafe()
        line += ": "
        line += message.logSafe(maximumLength: 4096)
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            line += " "
            line += field(key == "hb.request.id" ? "request_id" : key)
            line += "="
            line += field(value.description)
        }
        return line
    }

    /// `date` as `HH:mm:ss.SSS` in UTC (ISO 8601's extended time, as
    /// `Date.ISO8601FormatStyle.time(includingFractionalSeconds:)` writes it), by hand:
    /// the format style cost a third of the line (`LogFormatTests` compares the two).
    static func time(_ date: Date) -> String {
        // Whole seconds, then the fraction's nanoseconds truncated, as Foundation splits
        // it: multiplying by 1,000 first rounds 0.998999… up to the next millisecond.
        let interval = date.timeIntervalSince1970
        let whole = interval.rounded(.down)
        let secondOfDay = Int(((Int64(whole) % 86_400) + 86_400) % 86_400)
        let ofDay = secondOfDay * 1000 + Int((interval - whole) * 1e9) / 1_000_000
        let hours = ofDay / 3_600_000, minutes = ofDay / 60_000 % 60, seconds = ofDay / 1000 % 60, fraction = ofDay % 1000
        func digit(_ value: Int) -> UInt8 { UInt8(ascii: "0") + UInt8(value) }
        let colon = UInt8(ascii: ":"), dot = UInt8(ascii: ".")
        let bytes: [UInt8] = [
            digit(hours / 10), digit(hours % 10), colon, digit(minutes / 10), digit(minutes % 10), colon,
            digit(seconds / 10), digit(seconds % 10), dot, digit(fraction / 100), digit(fraction / 10 % 10), digit(fraction % 10),
        ]
        return String(decoding: bytes, as: UTF8.self)
    }

    /// One key or value: escaped, and quoted when it could otherwise be read as more than
    /// one field (empty, or holding a space, `=` or `"`).
    static func field(_ text: String) -> String {
        let escaped = text.logSafe()
        // By bytes: a space followed by a combining mark is one Character, not " ", yet a
        // reader splitting fields at spaces splits there.
        guard escaped.isEmpty || escaped.utf8.contains(where: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "\"") }) else { return escaped }
        return "\"" + escaped.replacing("\"", with: "\\\"") + "\""
    }
}
