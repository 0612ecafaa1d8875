import Foundation
import Synchronization
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

/// The store on PostgreSQL (postgres-nio's connections in ``PostgresConnectionPool``), for
/// several provider instances behind a proxy (docs/ARCHITECTURE.md, "Several instances").
///
/// Transactions run at SERIALIZABLE, so a read followed by a write (a code checked, then
/// consumed; a counter compared, then raised) behaves as if the instances took turns: two
/// instances can never both redeem one code. A transaction that loses a conflict
/// (SQLSTATE 40001, or a deadlock, 40P01) is run again from the start, up to
/// ``maximumAttempts`` times, which is why transaction bodies touch nothing but the
/// database. A commit returns once PostgreSQL has flushed it (its `synchronous_commit`,
/// `on` by default), so the provider answers only after that.
final class PostgresProviderDatabase: ProviderDatabase {
    let dialect = SQLDialect.postgres
    let statistics = StoreStatistics()
    let pool: PostgresConnectionPool
    /// The names its statement texts are prepared under on each connection.
    let statements: PostgresPreparedStatements
    private let logger: Logger
    /// How long a request waits for a connection before the provider answers 503.
    private let connectionDeadline: Duration
    static let maximumAttempts = 16

    init(
        configuration: PostgresConnection.Configuration, maximumConnections: Int = PostgresConnectionPool.defaultMaximumConnections,
        logger: Logger, connectionDeadline: Duration = .seconds(10), statements: PostgresPreparedStatements = PostgresPreparedStatements()
    ) {
        pool = PostgresConnectionPool(configuration: configuration, maximumConnections: maximumConnections, logger: logger)
        self.statements = statements
        self.logger = logger
        self.connectionDeadline = connectionDeadline
    }

    /// A lookup's statements run outside an explicit transaction (each is its own, at the
    /// session's READ COMMITTED), which saves the BEGIN and COMMIT round trips.
    func read<Result: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Result) async throws -> Result {
        statistics.countTransaction()
        do {
            return try await withDeadline { heartbeat in
                try await self.pool.withConnection(on: heartbeat.eventLoop, abandoned: heartbeat.letGo) { connection in
                    heartbeat.beat(holding: connection)
                    return try await body(PostgresTransactionHandle(connection: connection, logger: self.logger, heartbeat: heartbeat, statistics: self.statistics, statements: self.statements))
                }
            }
        } catch let error as PSQLError {
            throw Self.storeError(error)
        }
    }

    /// One statement outside an explicit transaction: it commits by itself, one round trip.
    func write(_ statement: SQLStatement) async throws -> [SQLRow] {
        try await read { try await $0.query(statement) }
    }

    func transaction<Result: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Result) async throws -> Result {
        statistics.countTransaction()
        do {
            return try await Self.retryingConflicts {
                try await self.withDeadline { heartbeat in
                    try await self.pool.withConnection(on: heartbeat.eventLoop, abandoned: heartbeat.letGo) { connection in
                        heartbeat.beat(holding: connection)
                        return try await Self.runTransaction(on: connection, logger: self.logger, heartbeat: heartbeat, statistics: self.statistics, statements: self.statements, body)
                    }
                }
            }
        } catch let error as PSQLError {
            throw Self.storeError(error)
        }
    }

    /// Runs `operation` again, up to ``maximumAttempts`` times, while it loses a
    /// serialization conflict, after a short random pause that grows with each attempt.
    private static func retryingConflicts<Value>(_ operation: () async throws -> Value) async throws -> Value {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await operation()
            } catch let error as PSQLError where isConflict(error) && attempt < maximumAttempts {
                try await Task.sleep(for: .milliseconds(Int.random(in: 1...(5 * min(attempt, 8)))))
            }
        }
    }

    /// The session advisory lock is taken on the connection the transaction then runs on,
    /// before its `BEGIN`, and released after its `COMMIT` or `ROLLBACK` (a connection
    /// that dies releases it too). A retried conflict keeps the lock. While another holds
    /// it, the lock is tried again after a short, growing, random pause (at most 50 ms).
    func exclusiveTransaction<Result: Sendable>(lock: Int64, _ body: @escaping @Sendable (any SQLTransaction) async throws -> Result) async throws -> Result {
        statistics.countTransaction()
        do {
            return try await withDeadline { heartbeat in
                try await self.pool.withConnection(on: heartbeat.eventLoop, abandoned: heartbeat.letGo) { connection in
                    heartbeat.beat(holding: connection)
                    // Tried, not waited for: every try is an answer (the deadline's heartbeat),
                    // so a holder that takes long (a migration on a loaded server) is waited
                    // out, while a database that stops answering is still a 503, not a hang.
                    var tries = 0
                    while true {
                        let rows = try await connection.queryWhileOpen("SELECT pg_try_advisory_lock(\(lock)) AS taken", logger: self.logger)
                        var taken = false
                        for try await row in rows { taken = try row.decode(Bool.self) }
                        heartbeat.beat()
                        if taken { break }
                        tries += 1
                        try await Task.sleep(for: .milliseconds(Int.random(in: 1...min(50, 2 << min(tries, 5)))))
                    }
                    let outcome: Swift.Result<Result, any Error>
                    do {
                        outcome = .success(try await Self.retryingConflicts {
                            try await Self.runTransaction(on: connection, logger: self.logger, heartbeat: heartbeat, statistics: self.statistics, statements: self.statements, body)
                        })
                    } catch {
                        outcome = .failure(error)
                    }
                    _ = try? await connection.queryWhileOpen("SELECT pg_advisory_unlock(\(lock))", logger: self.logger)
                    return try outcome.get()
                }
            }
        } catch let error as PSQLError {
            throw Self.storeError(error)
        }
    }

    private static func runTransaction<Result: Sendable>(
        on connection: PostgresConnection, logger: Logger, heartbeat: Heartbeat, statistics: StoreStatistics, statements: PostgresPreparedStatements,
        _ body: @escaping @Sendable (any SQLTransaction) async throws -> Result
    ) async throws -> Result {
        try await connection.queryWhileOpen("BEGIN ISOLATION LEVEL SERIALIZABLE", logger: logger)
        heartbeat.beat()
        let transaction = PostgresTransactionHandle(connection: connection, logger: logger, heartbeat: heartbeat, statistics: statistics, statements: statements)
        let result: Result
        do {
            result = try await body(transaction)
        } catch {
            _ = try? await connection.queryWhileOpen("ROLLBACK", logger: logger)
            throw error
        }
        do {
            try await connection.queryWhileOpen("COMMIT", logger: logger)
        } catch {
            _ = try? await connection.queryWhileOpen("ROLLBACK", logger: logger)
            throw error
        }
        return result
    }

    /// How late the deadline's watch may wake before it counts the delay as this
    /// process's, not PostgreSQL's.
    private static let stallTolerance = Duration.seconds(1)

    /// Fails with ``StoreError/Code-swift.struct/unavailable`` when PostgreSQL goes
    /// `connectionDeadline` without answering: no connection comes, or a statement gets no
    /// reply. When the deadline passes, the operation's connection is closed
    /// (``Heartbeat/abandon()``), which fails its statement and frees its place in the
    /// pool. (A connection that cannot be opened fails sooner, with the pool's own error.)
    /// The deadline runs from the last answer
    /// (``Heartbeat``), not from the start: a long transaction that keeps getting answers,
    /// such as a migration on a busy server, is not cut short.
    ///
    /// The operation runs in a task of its own that the caller does not wait for past the
    /// deadline: a task group would wait for its child even after cancelling it, and a
    /// postgres-nio query on a connection cut mid-flight (the outage test's relay) can
    /// ignore cancellation and never finish, which held a whole test run. (One way was a
    /// statement sent after its connection closed, which
    /// ``PostgresConnection/sendWhileOpen(_:)`` now refuses.)
    ///
    /// That task prefers the request's event loop (``EventLoopTaskExecutor/current``), and
    /// the deadline is a timer on an event loop, stopped as soon as the operation ends
    /// (``DeadlineWatch``): an unstructured task ran on the cooperative pool, so every
    /// read and write hopped there and back, and a watch sleeping in `Task.sleep` woke
    /// the runtime's timer thread at every deadline, long after its operation had ended
    /// (docs/PERFORMANCE.md, "Less per request").
    private func withDeadline<Result: Sendable>(_ operation: @escaping @Sendable (Heartbeat) async throws -> Result) async throws -> Result {
        let deadline = connectionDeadline
        let once = ResumeOnce<Result>()
        let executor = EventLoopTaskExecutor.current
        let heartbeat = Heartbeat(eventLoop: executor?.eventLoop ?? MultiThreadedEventLoopGroup.singleton.any())
        let watch = DeadlineWatch(on: heartbeat.eventLoop, checkingOn: executor)
        return try await withCheckedThrowingContinuation { continuation in
            once.set(continuation)
            let work = Task(executorPreference: executor) {
                do {
                    once.resume(with: .success(try await operation(heartbeat)))
                } catch {
                    once.resume(with: .failure(error))
                }
                watch.stop()
            }
            @Sendable func check(_ due: ContinuousClock.Instant) {
                guard !once.isDone else { return }
                let now = ContinuousClock.now
                // An answer came meanwhile: the deadline runs from it.
                if heartbeat.last.advanced(by: deadline) > now {
                    watch.schedule(at: heartbeat.last.advanced(by: deadline), check)
                    return
                }
                // This watch woke over a second late: the process itself was stalled
                // (every thread busy), and an answer may be waiting for a thread to
                // read it. Blaming PostgreSQL for that would fail a healthy request, so
                // it looks again a second later, when it did get to run.
                if now - due > Self.stallTolerance {
                    watch.schedule(at: now.advanced(by: Self.stallTolerance), check)
                    return
                }
                if once.resume(with: .failure(StoreError.unavailable("PostgreSQL did not answer within \(deadline)"))) {
                    // A statement on a connection cut mid-flight may never end by itself:
                    // closing the connection fails it, and its slot in the pool is freed.
                    heartbeat.abandon()
                    work.cancel()
                }
            }
            watch.schedule(at: heartbeat.last.advanced(by: deadline), check)
        }
    }

    func ping() async throws {
        try await read { try await $0.execute("SELECT 1 AS one") }
    }

    /// Closes the pool's connections, waiting at most five seconds (a connection cut
    /// mid-flight may never report its end).
    func close() async {
        let pool = pool
        let once = ResumeOnce<Void>()
        try? await withCheckedThrowingContinuation { continuation in
            once.set(continuation)
            Task {
                await pool.close()
                once.resume(with: .success(()))
            }
            Task {
                try? await Task.sleep(for: .seconds(5))
                once.resume(with: .success(()))
            }
        }
    }

    static func isConflict(_ error: PSQLError) -> Bool {
        guard error.code == .server, let state = error.serverInfo?[.sqlState] else { return false }
        return state == "40001" || state == "40P01"
    }

    static func storeError(_ error: any Error) -> StoreError {
        if let error = error as? StoreError { return error }
        guard let error = error as? PSQLError else {
            return StoreError.engineFailure("the PostgreSQL store failed", underlying: error)
        }
        if error.code == .server, let state = error.serverInfo?[.sqlState] {
            let message = error.serverInfo?[.message] ?? state
            switch state {
            case "23505": return StoreError.duplicate("a row with that key exists", underlying: error)
            case "40001", "40P01": return StoreError.conflict("concurrent transactions kept conflicting", underlying: error)
            case "53100": return StoreError.diskFull("PostgreSQL's disk is full; nothing of the failed write was kept", underlying: error)
            case _ where state.hasPrefix("08") || state.hasPrefix("57") || state.hasPrefix("53"):
                return StoreError.unavailable("PostgreSQL is unavailable: \(message)", underlying: error)
            default:
                return StoreError.engineFailure("PostgreSQL refused a statement: \(message) (SQLSTATE \(state))", underlying: error)
            }
        }
        switch error.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed, .queryCancelled:
            return StoreError.unavailable("PostgreSQL is unreachable", underlying: error)
        default:
            return StoreError.engineFailure("the PostgreSQL store failed (\(error.code))", underlying: error)
        }
    }
}

/// Statements of one transaction on one leased connection.
struct PostgresTransactionHandle: SQLTransaction, @unchecked Sendable {
    // A leased connection is used by one transaction body at a time; the body does not
    // keep it past its end (postgres-nio's withConnection contract).
    let connection: PostgresConnection
    let logger: Logger
    let heartbeat: Heartbeat
    let statistics: StoreStatistics
    let statements: PostgresPreparedStatements

    func query(_ statement: SQLStatement) async throws -> [SQLRow] {
        statistics.countStatement()
        var bindings = PostgresBindings(capacity: statement.binds.count)
        var types: [PostgresDataType] = []
        types.reserveCapacity(statement.binds.count)
        for value in statement.binds {
            switch value {
            case .null:
                bindings.appendNull()
                types.append(.null)
            case .integer(let integer):
                bindings.append(integer)
                types.append(.int8)
            case .text(let text):
                bindings.append(text)
                types.append(.text)
            case .blob(let data):
                bindings.append(ByteBuffer(bytes: data))
                types.append(.bytea)
            }
        }
        // Named, the text is parsed and planned once per connection
        // (``PostgresPreparedStatements``); the parameter types are those the unnamed
        // path sends with its Parse, so PostgreSQL reads the values alike.
        guard let name = statements.name(for: statement, types: types) else {
            let rows = try await connection.queryWhileOpen(PostgresQuery(unsafeSQL: statement.text, binds: bindings), logger: logger)
            heartbeat.beat()
            return try await Self.collect(rows)
        }
        let named = PostgresTextStatement.Named(name: name, sql: statement.text, types: types)
        do {
            let rows = try await PostgresTextStatement.$current.withValue(named) {
                try await connection.sendWhileOpen { try await connection.execute(PostgresTextStatement(bindings: bindings), logger: logger) }
            }
            heartbeat.beat()
            return try await Self.collect(rows)
        } catch let error as PSQLError where PostgresPreparedStatements.mayHaveSpoiled(error) {
            heartbeat.spoil()
            throw error
        }
    }

    /// The rows of an answer, each with the column names of the first.
    private static func collect<Rows: AsyncSequence>(_ rows: Rows) async throws -> [SQLRow] where Rows.Element == PostgresRow {
        var result: [SQLRow] = []
        var columns: SQLColumns?
        for try await row in rows {
            var values: [SQLValue] = []
            values.reserveCapacity(row.count)
            var names: [String] = []
            for cell in row {
                values.append(try Self.value(cell))
                if columns == nil { names.append(cell.columnName) }
            }
            let shared = columns ?? SQLColumns(names: names)
            columns = shared
            result.append(SQLRow(columns: shared, values: values))
        }
        return result
    }

    private static func value(_ cell: PostgresCell) throws -> SQLValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int8, .int4, .int2: return .integer(try cell.decode(Int64.self))
        case .text, .varchar, .name, .bpchar: return .text(try cell.decode(String.self))
        case .bytea: return .blob(Data(try cell.decode(ByteBuffer.self).readableBytesView))
        case .bool: return .integer(try cell.decode(Bool.self) ? 1 : 0)
        case .void: return .null
        default:
            throw StoreError.corruptRow("column \(cell.columnName) has PostgreSQL type \(cell.dataType), which the store never writes")
        }
    }
}

/// When PostgreSQL last answered within one operation, which the deadline counts from,
/// and the connection the operation holds, closed if the deadline passes.
final class Heartbeat: Sendable {
    /// Where the operation runs: its connection is leased from this loop's shelf.
    let eventLoop: any EventLoop
    private let instant = Mutex(ContinuousClock.now)
    private struct Holding {
        var connection: PostgresConnection?
        var abandoned = false
        /// A statement left the connection unfit to lend again (``spoil()``).
        var spoiled = false
    }
    private let holding = Mutex(Holding())

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    var last: ContinuousClock.Instant { instant.withLock { $0 } }

    func beat() {
        instant.withLock { $0 = ContinuousClock.now }
    }

    /// An answer came on `leased`, the connection this operation now holds. When the
    /// deadline already passed (while the operation waited for a connection, or for one
    /// to open, on a loaded machine), the caller has had its 503: the connection is closed
    /// at once, so the operation's statements fail rather than run late, unseen, holding
    /// a slot of the pool (and perhaps committing what its caller was told failed).
    func beat(holding leased: PostgresConnection) {
        let late = holding.withLock { holding -> Bool in
            guard !holding.abandoned else { return true }
            holding.connection = leased
            return false
        }
        if late { leased.closeSoon() }
        beat()
    }

    /// The operation is done with its connection; whether the deadline abandoned it
    /// first or a statement spoiled it (the pool then retires the connection rather than
    /// lend it again). After this, ``abandon()`` no longer touches the connection, which
    /// may be another request's by then.
    @Sendable func letGo() -> Bool {
        holding.withLock { holding in
            holding.connection = nil
            return holding.abandoned || holding.spoiled
        }
    }

    /// A named statement failed in a way that may fail it again on this connection
    /// (``PostgresPreparedStatements/mayHaveSpoiled(_:)``): the pool closes the
    /// connection when the operation lets go of it, and a new one prepares afresh.
    func spoil() {
        holding.withLock { $0.spoiled = true }
    }

    /// The deadline passed: the connection, if the operation still holds it, is closed,
    /// which fails whatever waits on it.
    func abandon() {
        holding.withLock { holding -> PostgresConnection? in
            holding.abandoned = true
            defer { holding.connection = nil }
            return holding.connection
        }?.closeSoon()
    }
}

/// A continuation resumed by whichever of several racing tasks gets there first.
private final class ResumeOnce<Value: Sendable>: Sendable {
    private let pending = Mutex<CheckedContinuation<Value, any Error>?>(nil)
    private let done = Mutex(false)

    /// Whether the continuation has been resumed.
    var isDone: Bool { done.withLock { $0 } }

    func set(_ continuation: CheckedContinuation<Value, any Error>) {
        pending.withLock { $0 = continuation }
    }

    /// Resumes with `outcome` if nobody has yet; whether this call did.
    @discardableResult
    func resume(with outcome: Swift.Result<Value, any Error>) -> Bool {
        guard let continuation = pending.withLock({ current -> CheckedContinuation<Value, any Error>? in
            defer { current = nil }
            return current
        }) else { return false }
        done.withLock { $0 = true }
        continuation.resume(with: outcome)
        return true
    }
}

/// One operation's deadline as a timer on an event loop, armed again as answers move it
/// and stopped (its timer cancelled) once the operation has ended.
///
/// The check itself runs where the operation runs (`checkingOn`, the cooperative pool when
/// nil), started when the timer fires: its lateness is then that executor's, which is what
/// the stall tolerance must measure. A timer on a free event loop would fire on time while
/// a saturated pool had not yet run the operation's answer, and blame PostgreSQL for it.
final class DeadlineWatch: Sendable {
    private let eventLoop: any EventLoop
    private let executor: (any TaskExecutor)?
    private struct State {
        var timer: Scheduled<Void>?
        var stopped = false
    }
    private let state = Mutex(State())

    init(on eventLoop: any EventLoop, checkingOn executor: (any TaskExecutor)?) {
        self.eventLoop = eventLoop
        self.executor = executor
    }

    /// Runs `check` with `due` at `due` (at once if it has passed), unless stopped.
    func schedule(at due: ContinuousClock.Instant, _ check: @escaping @Sendable (ContinuousClock.Instant) -> Void) {
        let delay = ContinuousClock.now.duration(to: due)
        let nanoseconds = max(0, delay.components.seconds * 1_000_000_000 + delay.components.attoseconds / 1_000_000_000)
        let executor = executor
        state.withLock { state in
            guard !state.stopped else { return }
            state.timer = eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) {
                Task(executorPreference: executor) { check(due) }
            }
        }
    }

    /// Cancels the armed timer; later ``schedule(at:_:)`` calls do nothing.
    func stop() {
        state.withLock { state in
            state.stopped = true
            state.timer?.cancel()
            state.timer = nil
        }
    }
}
