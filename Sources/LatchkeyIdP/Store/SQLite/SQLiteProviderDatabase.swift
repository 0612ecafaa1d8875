import Dispatch
import Foundation
import Logging
import Synchronization

/// The default store: one SQLite database in WAL mode, written by one connection that
/// commits transactions in groups, and read by a few reader connections that never wait
/// for it (docs/ARCHITECTURE.md, "The store's unit of work").
///
/// **One hop per transaction.** A transaction's body runs in one call on the writer's
/// connection (``SQLiteHandle``): its statements are executed synchronously, prepared
/// once per connection, with no thread switch between them. The caller that finds the
/// writer idle runs the group itself; callers that arrive meanwhile queue and are woken
/// with their answers. Only the durable `COMMIT` (a sync of the WAL, about 2 ms on the
/// VMs we measure on) leaves the caller's thread, for a dispatch queue of its own, so the
/// cooperative threads never wait on the disk.
///
/// **Durability** (docs/ARCHITECTURE.md, "The store"): `synchronous=FULL`, so the WAL is
/// synced at every commit and an answer is sent only after its transaction reached the
/// disk; `NORMAL` would be consistent after a crash of the process but could lose the
/// last commits to a power cut, which for a single-use code or a signature counter means
/// accepting it twice. Transactions that arrive while one group is being committed wait
/// and are committed together: each runs in its own savepoint (its failure rolls back
/// only itself), and one `COMMIT` (one sync) makes the whole group durable before any of
/// them answers. A transaction alone in its group needs no savepoint.
final class SQLiteProviderDatabase: ProviderDatabase {
    let dialect = SQLDialect.sqlite
    let statistics: StoreStatistics
    private let writer: SQLiteHandle
    /// Nil for an in-memory database, which other connections cannot open.
    private let readers: SQLiteReaderPool?
    /// Whether commits reach a disk (and so leave the caller's thread).
    private let durable: Bool
    /// Where the file work happens: durable commits, a `BEGIN` that waits for another
    /// process, opening (which may recover a WAL a killed process left) and closing (which
    /// checkpoints), so no cooperative thread waits on the disk.
    private let commits: DispatchQueue
    private let queue = Mutex(Queue())
    private let closed = Atomic<Bool>(false)
    /// Transactions in one group at most, so no answer waits behind too many others.
    private static let maximumGroup = 64

    private struct Queue: ~Copyable {
        var jobs: [any QueuedTransaction] = []
        var draining = false
        /// Set under the same lock that queues a job, so no job is queued once ``close()``
        /// has begun waiting for the writer to finish.
        var closed = false
    }

    private init(writer: SQLiteHandle, readers: SQLiteReaderPool?, durable: Bool, statistics: StoreStatistics, commits: DispatchQueue) {
        self.commits = commits
        self.writer = writer
        self.readers = readers
        self.durable = durable
        self.statistics = statistics
    }

    /// Opens (creating when needed) `directory/latchkey.sqlite3`, or an in-memory
    /// database when `directory` is nil, and migrates it.
    ///
    /// The directory must be 0700 and the file 0600, as the key vault requires of its
    /// own (docs/SECURITY.md, "The provider's store"); looser modes are refused, not
    /// repaired, since someone else may already have read or changed the file.
    /// Every SQLite transaction is exclusive: one writer, which `BEGIN IMMEDIATE` makes
    /// wait for another process's.
    func exclusiveTransaction<Result: Sendable>(lock: Int64, _ body: @escaping @Sendable (any SQLTransaction) async throws -> Result) async throws -> Result {
        try await transaction(body)
    }

    ///
    /// `readOnly` (`admin events verify --data-dir`): the file is opened as it is, never
    /// created, migrated or changed; every write fails.
    static func open(directory: URL?, readOnly: Bool = false, logger: Logger) async throws -> SQLiteProviderDatabase {
        let statistics = StoreStatistics()
        let commits = DispatchQueue(label: "latchkey.store.sqlite.commit")
        let database: SQLiteProviderDatabase
        if let directory {
            let path = readOnly ? directory.appendingPathComponent(StoreFiles.databaseName).path : try StoreFiles.prepareDatabaseFile(in: directory)
            // Read only, a database whose last connection closed (no -wal beside it) is
            // opened immutable, so nothing is made beside it; one in use is read as usual.
            let immutable = readOnly && !FileManager.default.fileExists(atPath: path + "-wal")
            let writer = try await Self.onQueue(commits) { () throws(StoreError) -> SQLiteHandle in
                let writer = try SQLiteHandle(path: path, readOnly: readOnly, immutable: immutable, counter: statistics)
                // busy_timeout: another process holding the file (a backup, a second
                // `serve`) is waited for, not failed at once; the writer's inline BEGIN
                // sets its own.
                let pragmas = readOnly ? ["PRAGMA busy_timeout=5000"]
                    : ["PRAGMA busy_timeout=5000", "PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL", "PRAGMA foreign_keys=ON"]
                for pragma in pragmas {
                    try writer.execute(pragma)
                }
                return writer
            }
            database = SQLiteProviderDatabase(
                // Read only: every lookup on the one read-only connection.
                writer: writer, readers: readOnly ? nil : SQLiteReaderPool(path: path, statistics: statistics, files: commits), durable: true,
                statistics: statistics, commits: commits
            )
        } else {
            let writer = try SQLiteHandle(path: ":memory:", readOnly: false, counter: statistics)
            try writer.execute("PRAGMA foreign_keys=ON")
            // The vendored SQLite overwrites freed content (SQLITE_SECURE_DELETE), which
            // matters for a file; an in-memory database's pages go with the process.
            try writer.execute("PRAGMA secure_delete=OFF")
            database = SQLiteProviderDatabase(writer: writer, readers: nil, durable: false, statistics: statistics, commits: commits)
        }
        guard !readOnly else { return database }
        do {
            try await Migrations.run(on: database)
        } catch {
            await database.close()
            throw error
        }
        return database
    }

    func transaction<Result: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Result) async throws -> Result {
        try await enqueue(body, readOnly: false)
    }

    /// Queues `body` for the writer and waits for its answer. A read-only job (a read of
    /// the in-memory database, which has no reader connections) runs without `BEGIN` and
    /// `COMMIT` when its group holds only reads (``commit(_:)``).
    private func enqueue<Result: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Result, readOnly: Bool) async throws -> Result {
        // The job runs on whichever task drains its group (another caller's, or a task of
        // its own), so the caller's task-local values go with it: who is asking, which the
        // audit events it writes name, and the provider's clock.
        let requester = AuditRequester.current
        let clock = ProviderClock.current
        let job = PendingTransaction(readOnly: readOnly, body: { transaction in
            try await ProviderClock.$current.withValue(clock) {
                try await AuditRequester.$current.withValue(requester) { try await body(transaction) }
            }
        })
        let drains = queue.withLock { queue -> Bool? in
            guard !queue.closed else { return nil }
            queue.jobs.append(job)
            guard !queue.draining else { return false }
            queue.draining = true
            return true
        }
        guard let drains else { throw StoreError.unavailable("the SQLite database is closed") }
        statistics.countTransaction()
        if drains {
            // The writer was idle: this caller commits the group its job leads, and hands
            // what queued meanwhile to a task of its own.
            await drainOnce()
            if moreQueued() {
                // On this request's event loop, when there is one: the callers it answers
                // wait there too, so no pool thread is woken to drain (docs/PERFORMANCE.md,
                // "Less per request").
                Task(executorPreference: EventLoopTaskExecutor.current) { await self.drainAll() }
            }
        }
        return try await job.answer()
    }

    func read<Result: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Result) async throws -> Result {
        guard !closed.load(ordering: .acquiring) else { throw StoreError.unavailable("the SQLite database is closed") }
        // No reader (in memory, or all busy): the writer answers, after the queued writes.
        guard let readers else { return try await enqueue(body, readOnly: true) }
        guard let reader = try readers.take() else { return try await transaction(body) }
        defer { readers.give(back: reader) }
        statistics.countTransaction()
        return try await body(SQLiteTransactionHandle(handle: reader))
    }

    /// SQLite has no data-modifying CTEs, so no caller gives it one; a single statement is
    /// a transaction of the group commit like any other.
    func write(_ statement: SQLStatement) async throws -> [SQLRow] {
        try await transaction { try await $0.query(statement) }
    }

    func ping() async throws {
        _ = try await read { try await $0.query("SELECT 1 AS one") }
    }

    /// Later transactions fail; the transactions already queued are committed first, then
    /// the connections close on the commit queue (the last one checkpoints the WAL).
    func close() async {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        queue.withLock { $0.closed = true }
        // Wait for the writer to finish what was queued before (a group commits in
        // milliseconds; five seconds is a store that hangs, closed regardless).
        for _ in 0..<500 where queue.withLock({ $0.draining }) {
            try? await Task.sleep(for: .milliseconds(10))
        }
        await readers?.close()
        let writer = writer
        await withCheckedContinuation { continuation in
            commits.async {
                writer.close()
                continuation.resume()
            }
        }
    }

    /// Runs `work` on `queue` and returns what it returned.
    private static func onQueue<Value: Sendable>(_ queue: DispatchQueue, _ work: @escaping @Sendable () throws(StoreError) -> Value) async throws(StoreError) -> Value {
        let outcome: Swift.Result<Value, StoreError> = await withCheckedContinuation { continuation in
            queue.async {
                do throws(StoreError) {
                    continuation.resume(returning: .success(try work()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try outcome.get()
    }

    /// Commits queued groups until none is left.
    private func drainAll() async {
        repeat {
            await drainOnce()
        } while moreQueued()
    }

    /// Whether jobs wait for the writer; when none do, the writer is marked idle in the
    /// same step, so the next caller drains.
    private func moreQueued() -> Bool {
        queue.withLock { queue in
            guard !queue.jobs.isEmpty else {
                queue.draining = false
                return false
            }
            return true
        }
    }

    /// Takes the next group from the queue, commits it and answers its callers.
    private func drainOnce() async {
        let group = queue.withLock { queue -> [any QueuedTransaction] in
            let count = min(queue.jobs.count, Self.maximumGroup)
            let group = Array(queue.jobs.prefix(count))
            queue.jobs.removeFirst(count)
            return group
        }
        guard !group.isEmpty else { return }
        let failure = await commit(group)
        for job in group { job.finish(commitError: failure) }
    }

    /// Runs a group in one transaction; nil when the group committed, else the error
    /// every transaction of it fails with.
    private func commit(_ group: [any QueuedTransaction]) async -> StoreError? {
        let handle = SQLiteTransactionHandle(handle: writer)
        if !durable, group.allSatisfy(\.readOnly) {
            // Reads of the in-memory database: no other connection can write it, and this
            // drainer holds its one connection, so the reads see one state without a
            // transaction around them, and a sign-in's credential lookup skips a BEGIN and
            // a COMMIT (docs/PERFORMANCE.md, "Less per request").
            writer.onlyReads = true
            for job in group { _ = await job.run(in: handle) }
            writer.onlyReads = false
            return nil
        }
        do {
            try await begin()
        } catch {
            return error
        }
        if group.count == 1 {
            // Alone: the transaction is the group, and its failure rolls back everything.
            guard await group[0].run(in: handle) else {
                do {
                    try writer.execute("ROLLBACK")
                    return nil
                } catch {
                    return error
                }
            }
        } else {
            for job in group {
                do {
                    try writer.execute("SAVEPOINT latchkey_transaction")
                    if await job.run(in: handle) {
                        try writer.execute("RELEASE latchkey_transaction")
                    } else {
                        // The body threw: undo its writes only.
                        try writer.execute("ROLLBACK TO latchkey_transaction")
                        try writer.execute("RELEASE latchkey_transaction")
                    }
                } catch {
                    // SQLite ended the whole transaction itself (a full disk does that), so
                    // every transaction of the group fails with it; those that never ran too.
                    try? writer.execute("ROLLBACK")
                    return error
                }
            }
        }
        do {
            try await onCommitQueue { (writer: SQLiteHandle) throws(StoreError) in try writer.execute("COMMIT") }
            return nil
        } catch {
            try? writer.execute("ROLLBACK")
            return error
        }
    }

    /// `BEGIN IMMEDIATE` takes the write lock. It is tried at once on the caller's thread;
    /// only when another process holds the lock is it waited for (busy_timeout), on the
    /// commit queue, so no cooperative thread sleeps on a lock.
    private func begin() async throws(StoreError) {
        writer.setBusyTimeout(milliseconds: 0)
        do {
            try writer.execute("BEGIN IMMEDIATE")
            writer.setBusyTimeout(milliseconds: 5000)
        } catch where error.code == .unavailable {
            try await onCommitQueue { (writer: SQLiteHandle) throws(StoreError) in
                writer.setBusyTimeout(milliseconds: 5000)
                try writer.execute("BEGIN IMMEDIATE")
            }
        } catch {
            writer.setBusyTimeout(milliseconds: 5000)
            throw error
        }
    }

    /// Runs `work` on the writer on the commit queue when commits reach a disk, at once
    /// otherwise.
    private func onCommitQueue(_ work: @escaping @Sendable (SQLiteHandle) throws(StoreError) -> Void) async throws(StoreError) {
        guard durable else { return try work(writer) }
        let writer = writer
        try await Self.onQueue(commits) { () throws(StoreError) in try work(writer) }
    }
}

/// A transaction of the group: its body, run once inside the group's transaction, and
/// its answer, given once the group's fate is known.
private protocol QueuedTransaction: Sendable {
    /// A read: it writes nothing, so it needs no transaction on the in-memory database.
    var readOnly: Bool { get }
    /// Runs the body; false when it threw (its writes are then rolled back).
    func run(in transaction: SQLiteTransactionHandle) async -> Bool
    /// Answers the caller: the body's error, else the commit's, else the body's result.
    func finish(commitError: StoreError?)
}

private final class PendingTransaction<Result: Sendable>: QueuedTransaction {
    let readOnly: Bool
    private let body: @Sendable (any SQLTransaction) async throws -> Result
    private let state = Mutex(State.running(nil))

    private enum State {
        /// The body's outcome once it ran (nil before).
        case running(Swift.Result<Result, any Error>?)
        /// The caller waits for the answer.
        case waiting(Swift.Result<Result, any Error>?, CheckedContinuation<Result, any Error>)
        case answered(Swift.Result<Result, any Error>)
    }

    init(readOnly: Bool, body: @escaping @Sendable (any SQLTransaction) async throws -> Result) {
        self.readOnly = readOnly
        self.body = body
    }

    func run(in transaction: SQLiteTransactionHandle) async -> Bool {
        let outcome: Swift.Result<Result, any Error>
        do {
            outcome = .success(try await body(transaction))
        } catch {
            outcome = .failure(error)
        }
        state.withLock { state in
            switch state {
            case .running: state = .running(outcome)
            case .waiting(_, let continuation): state = .waiting(outcome, continuation)
            case .answered: break
            }
        }
        if case .success = outcome { return true }
        return false
    }

    func finish(commitError: StoreError?) {
        let resume = state.withLock { state -> (CheckedContinuation<Result, any Error>, Swift.Result<Result, any Error>)? in
            let outcome: Swift.Result<Result, any Error>?
            let continuation: CheckedContinuation<Result, any Error>?
            switch state {
            case .running(let ran): (outcome, continuation) = (ran, nil)
            case .waiting(let ran, let waiting): (outcome, continuation) = (ran, waiting)
            case .answered: return nil
            }
            let answer: Swift.Result<Result, any Error>
            switch outcome {
            case .failure(let error): answer = .failure(error)
            case .success(let result): answer = commitError.map { .failure($0) } ?? .success(result)
            case nil: answer = .failure(commitError ?? StoreError.engineFailure("the transaction was never run"))
            }
            state = .answered(answer)
            return continuation.map { ($0, answer) }
        }
        if let (continuation, answer) = resume { continuation.resume(with: answer) }
    }

    /// The answer: at once when the group is already committed (the caller drained it
    /// itself), else when it is.
    func answer() async throws -> Result {
        if case .answered(let answer) = state.withLock({ $0 }) { return try answer.get() }
        return try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Swift.Result<Result, any Error>? in
                switch state {
                case .answered(let answer): return answer
                case .running(let ran):
                    state = .waiting(ran, continuation)
                    return nil
                case .waiting:
                    preconditionFailure("a transaction's answer is awaited once")
                }
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}

/// Statements of a transaction or a read, on one connection, executed at once.
struct SQLiteTransactionHandle: SQLTransaction {
    let handle: SQLiteHandle

    func query(_ statement: SQLStatement) async throws -> [SQLRow] {
        try handle.query(statement)
    }
}
