/// The provider's state lives behind this: one SQL engine, reached only through
/// transactions (docs/ARCHITECTURE.md, "The store" and "The store's unit of work"). Both
/// engines run the same statements (``SQLStatement``), so each operation of the provider
/// is written once.
///
/// A transaction's body may run more than once: PostgreSQL transactions run at
/// SERIALIZABLE and are retried when they conflict, so a body must touch nothing but the
/// transaction (no mail sent, no counter outside the store bumped) and throw to abort.
/// Its result is returned only once the transaction is durably committed.
///
/// A body must not suspend for anything but its own statements: on SQLite the whole
/// body runs in one call on the writer's connection, its statements executed at once,
/// and other transactions wait for it.
protocol ProviderDatabase: Sendable {
    /// Which engine, for the few statements that differ (DDL types).
    var dialect: SQLDialect { get }

    /// Transactions and statements run so far.
    var statistics: StoreStatistics { get }

    /// Runs `body` in one transaction and commits it; any error rolls it back.
    func transaction<Result: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Result) async throws -> Result

    /// A transaction that no other instance on the store runs at the same time as another
    /// of the same `lock`, and that sees everything the one before it committed: what
    /// migrations and other start-up work need (docs/ARCHITECTURE.md, "Several
    /// instances"). On SQLite every transaction already is (one writer, `BEGIN
    /// IMMEDIATE`); on PostgreSQL a session advisory lock is taken *before* `BEGIN`, since
    /// a SERIALIZABLE transaction's snapshot is fixed by its first statement, and a lock
    /// taken by that statement would be granted to a snapshot older than the holder's
    /// commit. Work that many requests would otherwise fight over in conflicting
    /// SERIALIZABLE transactions (a client's pool of device codes) takes turns this way too.
    func exclusiveTransaction<Result: Sendable>(lock: Int64, _ body: @escaping @Sendable (any SQLTransaction) async throws -> Result) async throws -> Result

    /// Runs a lookup that writes nothing, without waiting for the writer: on SQLite a
    /// reader connection (WAL), on PostgreSQL statements outside an explicit transaction.
    /// Each statement sees committed state, but two statements of one body may see
    /// different commits; a decision that needs them consistent, or that writes, belongs
    /// in ``transaction(_:)``.
    func read<Result: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Result) async throws -> Result

    /// Runs a write that is one statement, atomic by itself. On PostgreSQL it commits on
    /// its own, at READ COMMITTED, with no `BEGIN` or `COMMIT` round trip; a statement made
    /// of data-modifying CTEs, each step conditional on the one before, does a whole unit
    /// of work that way (docs/ARCHITECTURE.md, "The store's unit of work"). Its checks must
    /// hold under READ COMMITTED: compare-and-set conditions (`WHERE sign_count = $old`),
    /// which PostgreSQL re-checks on the row it waited for, and unique keys, not values
    /// read by an earlier statement. On SQLite it is a transaction of the group commit.
    func write(_ statement: SQLStatement) async throws -> [SQLRow]

    /// Whether the database answers now (the readiness probe).
    func ping() async throws

    /// Closes connections; later transactions fail.
    func close() async
}

/// What a transaction's body can do.
protocol SQLTransaction: Sendable {
    /// Runs a statement and returns its rows (a `RETURNING` clause gives rows too).
    func query(_ statement: SQLStatement) async throws -> [SQLRow]
}

extension SQLTransaction {
    /// Runs a statement whose rows, if any, are not needed.
    func execute(_ statement: SQLStatement) async throws {
        _ = try await query(statement)
    }

    /// The first row, or nil.
    func first(_ statement: SQLStatement) async throws -> SQLRow? {
        try await query(statement).first
    }
}

enum SQLDialect: Sendable {
    case sqlite
    case postgres
}
