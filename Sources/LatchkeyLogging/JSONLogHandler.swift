public import Logging
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto

/// Structured logs for `serve --log-format json` (docs/ARCHITECTURE.md, "Operations"):
/// one JSON object per line on standard error, with `time` (RFC 3339, UTC), `level`,
/// `logger`, `message`, `request_id` (Hummingbird's id of the request, also sent back as
/// `X-Request-Id`) and the rest of the metadata as strings.
public typealias JSONLogHandler = LineLogHandler<JSONLogFormat>

/// The line format of ``JSONLogHandler``; values from outside are safe by JSON's own
/// escaping.
public enum JSONLogFormat: LogLineFormat {
    public static func line(level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String? {
        var fields: [String: String] = [:]
        for (key, value) in metadata {
            fields[key == "hb.request.id" ? "request_id" : key] = "\(value)"
        }
        fields["time"] = TextLogFormat.time(Date())
        fields["level"] = level.rawValue
        fields["logger"] = label
        fields["message"] = message
        // What JSONEncoder with sorted keys writes, written directly (JSONObjectWriter).
        var writer = JSONObjectWriter(capacity: 256 + message.utf8.count)
        for key in fields.keys.sorted() {
            writer.string(key, fields[key] ?? "")
        }
        return String(decoding: writer.finishedBytes(), as: UTF8.self)
    }
}
