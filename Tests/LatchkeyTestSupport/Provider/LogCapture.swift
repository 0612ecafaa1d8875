public import Logging
import Synchronization
import Foundation

/// The provider's log, kept in memory for a test to read: every record at the logger's
/// level, with its metadata flattened to text. Records at warning and above also go to
/// standard error, as they did before the log was captured, so a failing test still
/// shows them.
public final class LogCapture: Sendable {
    /// One log record.
    public struct Record: Sendable, CustomStringConvertible {
        public let level: Logger.Level
        public let message: String
        /// The record's metadata (the logger's and the call's), each value as text.
        public let metadata: [String: String]

        public var description: String {
            "\(level) \(message) " + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
    }

    private let storage = Mutex<[Record]>([])

    public init() {}

    /// What was logged so far, oldest first.
    public var records: [Record] { storage.withLock { $0 } }

    /// Everything logged so far as one text, to search for what must never be there.
    public var text: String { records.map(\.description).joined(separator: "\n") }

    /// The records whose message is `message`.
    public func records(_ message: String) -> [Record] { records.filter { $0.message == message } }

    /// A handler factory for `ProviderConfiguration.logHandler`.
    public var handler: @Sendable (String) -> any LogHandler {
        { [self] label in Handler(capture: self, label: label) }
    }

    fileprivate func append(_ record: Record) {
        storage.withLock { $0.append(record) }
    }

    private struct Handler: LogHandler {
        let capture: LogCapture
        let label: String
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            let record = Record(level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" })
            capture.append(record)
            if event.level >= .warning {
                FileHandle.standardError.write(Data("\(label): \(record)\n".utf8))
            }
        }
    }
}
