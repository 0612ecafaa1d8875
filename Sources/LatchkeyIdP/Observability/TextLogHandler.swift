public import Logging
import Foundation
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
        var line = Date().ISO8601Format(.iso8601.time(includingFractionalSeconds: true))
        line += " \(level.rawValue) \(label.logSafe()): \(message.logSafe(maximumLength: 4096))"
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            line += " \(field(key == "hb.request.id" ? "request_id" : key))=\(field("\(value)"))"
        }
        return line
    }

    /// One key or value: escaped, and quoted when it could otherwise be read as more than
    /// one field (empty, or holding a space, `=` or `"`).
    static func field(_ text: String) -> String {
        let escaped = text.logSafe()
        guard escaped.isEmpty || escaped.contains(where: { $0 == " " || $0 == "=" || $0 == "\"" }) else { return escaped }
        return "\"" + escaped.replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
