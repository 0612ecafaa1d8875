public import Logging
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import Glibc

/// How ``LineLogHandler`` writes one event: a line without its newline, or nil to drop it.
public protocol LogLineFormat: Sendable {
    static func line(level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String?
}

/// The provider's logs (docs/ARCHITECTURE.md, "Operations"): each event as one line in
/// `Format` (``TextLogHandler``, ``JSONLogHandler``) on standard error, the handler's
/// metadata merged with the event's. No log line holds a secret, code or token
/// (docs/SECURITY.md); the handler adds nothing of its own.
public struct LineLogHandler<Format: LogLineFormat>: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let label: String
    private let write: @Sendable (String) -> Void

    /// A handler writing to standard error.
    public init(label: String) {
        self.init(label: label, write: Self.writeToStandardError)
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
        let fields = event.metadata.map { metadata.merging($0) { $1 } } ?? metadata
        guard let line = Format.line(level: event.level, label: label, message: "\(event.message)", metadata: fields) else { return }
        write(line + "\n")
    }

    /// `line` on standard error, in as few `write(2)`s as the kernel takes (one, for a line
    /// shorter than a pipe's atomic size), retried on EINTR. A closed or full standard
    /// error drops the line: `FileHandle.write(_:)` would stop the process over a log
    /// line, and a `Data` copy of every line was a third of the handler's time
    /// (docs/PERFORMANCE.md, "Less per request").
    @Sendable static func writeToStandardError(_ line: String) {
        FileDescriptorIO.write(STDERR_FILENO, line)
    }
}
