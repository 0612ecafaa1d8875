public import Logging
import Foundation

/// Structured logs for `serve --log-format json` (docs/ARCHITECTURE.md, "Operations"):
/// one JSON object per line on standard error, with `time` (RFC 3339, UTC), `level`,
/// `logger`, `message`, `request_id` (Hummingbird's id of the request, also sent back as
/// `X-Request-Id`) and the rest of the metadata as strings. The provider's log lines carry
/// no secret, code or token (docs/SECURITY.md); this handler adds nothing of its own.
public struct JSONLogHandler: LogHandler {
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
        var fields: [String: String] = [:]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            fields[key == "hb.request.id" ? "request_id" : key] = "\(value)"
        }
        fields["time"] = Date().ISO8601Format(.iso8601.time(includingFractionalSeconds: true))
        fields["level"] = event.level.rawValue
        fields["logger"] = label
        fields["message"] = "\(event.message)"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(fields) else { return }
        write(String(decoding: data, as: UTF8.self) + "\n")
    }
}
