import Dispatch
import Synchronization

/// Reader connections to a WAL database: a lookup runs on one of them at once, on the
/// caller's thread, and sees the last committed state without waiting for the writer
/// (docs/ARCHITECTURE.md, "The store's unit of work").
///
/// Readers are opened when first needed, up to ``maximumReaders``; a lookup that finds
/// them all taken goes through the writer instead of waiting. Each is `query_only`, so
/// a write that strays into a lookup fails instead of committing outside the writer.
final class SQLiteReaderPool: Sendable {
    static let maximumReaders = 4
    private let path: String
    private let statistics: StoreStatistics
    /// Where readers are closed: the last connection to close checkpoints the WAL, file
    /// work that stays off the cooperative threads. (A reader opens after the writer has
    /// recovered the WAL, which is quick.)
    private let files: DispatchQueue
    private let state = Mutex(State())

    private struct State: ~Copyable {
        var idle: [SQLiteHandle] = []
        var opened = 0
        var closed = false
    }

    init(path: String, statistics: StoreStatistics, files: DispatchQueue) {
        self.path = path
        self.statistics = statistics
        self.files = files
    }

    /// An idle reader, a new one, or nil when all are taken.
    func take() throws(StoreError) -> SQLiteHandle? {
        enum Taken { case idle(SQLiteHandle), open, none }
        let taken = state.withLock { state -> Taken in
            guard !state.closed else { return .none }
            if let reader = state.idle.popLast() { return .idle(reader) }
            guard state.opened < Self.maximumReaders else { return .none }
            state.opened += 1
            return .open
        }
        switch taken {
        case .idle(let reader):
            return reader
        case .none:
            return nil
        case .open:
            do {
                let reader = try SQLiteHandle(path: path, readOnly: false, counter: statistics)
                for pragma in ["PRAGMA query_only=ON", "PRAGMA busy_timeout=1000"] {
                    try reader.execute(pragma)
                }
                return reader
            } catch {
                state.withLock { $0.opened -= 1 }
                throw error
            }
        }
    }

    func give(back reader: SQLiteHandle) {
        let closing = state.withLock { state -> Bool in
            guard state.closed else {
                state.idle.append(reader)
                return false
            }
            state.opened -= 1
            return true
        }
        if closing { files.async { reader.close() } }
    }

    /// Closes the idle readers on the file queue; readers in use are closed when given back.
    func close() async {
        let idle = state.withLock { state -> [SQLiteHandle] in
            state.closed = true
            defer { state.idle = [] }
            return state.idle
        }
        await withCheckedContinuation { continuation in
            files.async {
                for reader in idle { reader.close() }
                continuation.resume()
            }
        }
    }
}
