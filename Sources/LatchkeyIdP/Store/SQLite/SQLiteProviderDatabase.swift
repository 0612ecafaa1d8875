import Foundation
import Logging
import NIOCore
import SQLiteNIO
import Synchronization

/// The default store: one SQLite database (sqlite-nio, which builds its own SQLite), in
/// WAL mode, written by one connection that commits transactions in groups.
///
/// Durability (docs/ARCHITECTURE.md, "The store"): `synchronous=FULL`, so the WAL is
/// synced at every commit and an answer is sent only after its transaction reached the
/// disk; `NORMAL` would be consistent after a crash of the process but could lose the
/// last commits to a power cut, which for a single-use code or a signature counter
/// means accepting it twice. A sync costs about 2 ms on the VMs we measure on, so
/// transactions that arrive while one is being committed wait and are committed
/// together: each runs in its own savepoint (its failure rolls back only itself), and
/// one `COMMIT` (one sync) makes the whole group durable before any of them answers.
final class SQLiteProviderDatabase: ProviderDatabase {
    let dialect = SQLDialect.sqlite
    private let connection: SQLiteConnection
    private let queue = Mutex(Queue())
    private let closed = Mutex(false)
    /// Transactions in one group at most, so no answer waits behind too many others.
    private static let maximumGroup = 64

    private struct Queue: ~Copyable {
        var jobs: [any QueuedTransaction] = []
        var draining = false
    }

    private init(connection: SQLiteConnection) {
        self.connection = connection
    }

    /// Opens (creating when needed) `directory/latchkey.sqlite3`, or an in-memory
    /// database when `directory` is nil, and migrates it.
    ///
    /// The directory must be 0700 and the file 0600, as the key vault requires of its
    /// own (docs/SECURITY.md, "The provider's store"); looser modes are refused, not
    /// repaired, since someone else may already have read or changed the file.
    static func open(directory: URL?, logger: Logger) async throws -> SQLiteProviderDatabase {
        let storage: SQLiteConnection.Storage
        if let directory {
            let path = try StoreFiles.prepareDatabaseFile(in: directory)
            storage = .file(path: path)
        } else {
            storage = .memory
        }
        let connection: SQLiteConnection
        do {
            connection = try await SQLiteConnection.open(storage: storage, logger: logger)
        } catch {
            throw StoreError.engineFailure("cannot open the SQLite database", underlying: error)
        }
        let database = SQLiteProviderDatabase(connection: connection)
        do {
            // busy_timeout replaces sqlite-nio's retry-at-once busy handler: another
            // process holding the file (a backup, a second `serve`) is waited for, not spun on.
            for pragma in ["PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", "PRAGMA foreign_keys=ON", "PRAGMA busy_timeout=5000"] {
                _ = try await connection.query(pragma)
            }
        } catch {
            await database.close()
            throw Self.storeError(error)
        }
        do {
            try await Migrations.run(on: database)
        } catch {
            await database.close()
            throw error
        }
        return database
    }

    func transaction<Result: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
            let job = PendingTransaction(body: body, continuation: continuation)
            let startDrain = queue.withLock { queue -> Bool in
                queue.jobs.append(job)
                guard !queue.draining else { return false }
                queue.draining = true
                return true
            }
            if startDrain {
                Task { await self.drain() }
            }
        }
    }

    func ping() async throws {
        _ = try await transaction { try await $0.query("SELECT 1") }
    }

    /// Closes the connection once; later calls do nothing.
    func close() async {
        let first = closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        if first { try? await connection.close() }
    }

    /// Commits queued transactions in groups until none is left.
    private func drain() async {
        while true {
            let group = queue.withLock { queue -> [any QueuedTransaction]? in
                guard !queue.jobs.isEmpty else {
                    queue.draining = false
                    return nil
                }
                let count = min(queue.jobs.count, Self.maximumGroup)
                let group = Array(queue.jobs.prefix(count))
                queue.jobs.removeFirst(count)
                return group
            }
            guard let group else { return }
            let failure = await commit(group)
            for job in group { job.finish(commitError: failure) }
        }
    }

    /// Runs a group in one transaction, each in its own savepoint; nil when the group
    /// committed, else the error every transaction of it fails with.
    private func commit(_ group: [any QueuedTransaction]) async -> StoreError? {
        let handle = SQLiteTransactionHandle(connection: connection)
        do {
            try await handle.raw("BEGIN IMMEDIATE")
        } catch {
            return Self.storeError(error)
        }
        for job in group {
            do {
                try await handle.raw("SAVEPOINT latchkey_transaction")
                if await job.run(in: handle) {
                    try await handle.raw("RELEASE latchkey_transaction")
                } else {
                    // The body threw: undo its writes only.
                    try await handle.raw("ROLLBACK TO latchkey_transaction")
                    try await handle.raw("RELEASE latchkey_transaction")
                }
            } catch {
                // SQLite ended the whole transaction itself (a full disk does that), so
                // every transaction of the group fails with it; those that never ran too.
                _ = try? await handle.raw("ROLLBACK")
                return Self.storeError(error)
            }
        }
        do {
            try await handle.raw("COMMIT")
            return nil
        } catch {
            _ = try? await handle.raw("ROLLBACK")
            return Self.storeError(error)
        }
    }

    /// SQLite's errors as ``StoreError``s.
    static func storeError(_ error: any Error) -> StoreError {
        if let error = error as? StoreError { return error }
        guard let sqlite = error as? SQLiteError else {
            return StoreError.engineFailure("the SQLite database failed", underlying: error)
        }
        switch sqlite.reason {
        case .full:
            return StoreError.diskFull("the disk holding the SQLite database is full; nothing of the failed write was kept", underlying: sqlite)
        case .constraint, .constraintUniqueFailed, .constraintPrimaryKeyFailed, .constraintForeignKeyFailed:
            return StoreError.duplicate("a row with that key exists", underlying: sqlite)
        case .busy, .busyTimeout, .locked:
            return StoreError.unavailable("the SQLite database is locked by another process", underlying: sqlite)
        case .corrupt, .notADatabase:
            return StoreError.engineFailure("the SQLite database file is damaged or not a database", underlying: sqlite)
        default:
            return StoreError.engineFailure("the SQLite database failed", underlying: sqlite)
        }
    }
}

/// A transaction of the group: its body, run once inside the group's transaction, and
/// its answer, given once the group's fate is known.
private protocol QueuedTransaction: Sendable {
    /// Runs the body; false when it threw (its writes are then rolled back).
    func run(in transaction: SQLiteTransactionHandle) async -> Bool
    /// Answers the caller: the body's error, else the commit's, else the body's result.
    func finish(commitError: StoreError?)
}

private final class PendingTransaction<Result: Sendable>: QueuedTransaction {
    private let body: @Sendable (any SQLTransaction) async throws -> Result
    private let continuation: CheckedContinuation<Result, any Error>
    private let outcome = Mutex<Swift.Result<Result, any Error>?>(nil)

    init(body: @escaping @Sendable (any SQLTransaction) async throws -> Result, continuation: CheckedContinuation<Result, any Error>) {
        self.body = body
        self.continuation = continuation
    }

    func run(in transaction: SQLiteTransactionHandle) async -> Bool {
        do {
            let result = try await body(transaction)
            outcome.withLock { $0 = .success(result) }
            return true
        } catch {
            outcome.withLock { $0 = .failure(error) }
            return false
        }
    }

    func finish(commitError: StoreError?) {
        switch outcome.withLock({ $0 }) {
        case .failure(let error):
            continuation.resume(throwing: error)
        case .success(let result):
            if let commitError { continuation.resume(throwing: commitError) } else { continuation.resume(returning: result) }
        case nil:
            continuation.resume(throwing: commitError ?? StoreError.engineFailure("the transaction was never run"))
        }
    }
}

/// Statements of the group's transaction, on the one connection.
struct SQLiteTransactionHandle: SQLTransaction {
    let connection: SQLiteConnection

    func query(_ statement: SQLStatement) async throws -> [SQLRow] {
        let binds = statement.binds.map { value -> SQLiteData in
            switch value {
            case .null: .null
            case .integer(let integer): .integer(SQLiteInt64(integer))
            case .text(let text): .text(text)
            case .blob(let data): .blob(ByteBuffer(bytes: data))
            }
        }
        let rows: [SQLiteRow]
        do {
            rows = try await connection.query(statement.text, binds)
        } catch {
            throw SQLiteProviderDatabase.storeError(error)
        }
        return rows.map { row in
            SQLRow(values: row.columns.map { column in
                switch column.data {
                case .null: .null
                case .integer(let integer): .integer(Int64(integer))
                // The schema has no REAL column; a float read back is a changed file.
                case .float: .null
                case .text(let text): .text(text)
                case .blob(let buffer): .blob(Data(buffer.readableBytesView))
                }
            })
        }
    }

    func raw(_ text: String) async throws {
        do {
            _ = try await connection.query(text)
        } catch {
            throw SQLiteProviderDatabase.storeError(error)
        }
    }
}
