public import Logging
import Foundation
import LatchkeyProtocol

/// Text logs for `serve` (the default `--log-format text`): one line per event on
/// standard error, `time level logger: message key=value …` in logfmt's style, metadata
/// sorted by key (docs/ARCHITECTURE.md, "Operations").
///
/// Log lines carry values from outside: a `client_id`, a user name, a path, a header.
/// Each value, and the message, goes through ``Swift/String/logSafe(maximumLength:)``, so
/// a value holding a newline cannot forge a line of its own and one holding an escape
/// sequence cannot drive the operator's terminal; a value with a space, `=` or `"` is
/// quoted, so it cannot pose as another field (docs/SECURITY.md, "Logs"). JSON logs
/// (``JSONLogHandler``) are safe by their encoding.
public struct TextLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String
    private let write: @Sendable (String) -> Void

    /// A handler writing to standard error.
    public init(label: String) {
        self.init(label: label) { line in FileHandle.standardError.write(Data(line.utf8)) }
    }

    /// A handler writing each line (with its newline) through `write`.
    public init(label: String, write: @escaping @Sendable (String) -> Void) {
        self.label = label
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var line = Date().ISO8601Format(.iso8601.time(includingFractionalSeconds: true))
        line += " \(event.level.rawValue) \(label.logSafe()): \("\(event.message)".logSafe(maximumLength: 4096))"
        let fields = event.metadata.map { metadata.merging($0) { $1 } } ?? metadata
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            line += " \(Self.field(key == "hb.request.id" ? "request_id" : key))=\(Self.field("\(value)"))"
        }
        write(line + "\n")
    }

    /// One key or value: escaped, and quoted when it could otherwise be read as more than
    /// one field (empty, or holding a space, `=` or `"`).
    static func field(_ text: String) -> String {
        let escaped = text.logSafe()
        guard escaped.isEmpty || escaped.contains(where: { $0 == " " || $0 == "=" || $0 == "\"" }) else { return escaped }
        return "\"" + escaped.replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
