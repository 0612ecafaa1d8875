import Foundation

/// The store, counted: transactions in flight (how much of the pool is in use) and
/// failures by ``StoreError/Code``, for ``ProviderMetrics``. Everything else passes through.
struct MeteredDatabase: ProviderDatabase {
    let database: any ProviderDatabase
    let metrics: ProviderMetrics

    var dialect: SQLDialect { database.dialect }
    var statistics: StoreStatistics { database.statistics }

    func transaction<Result: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Result) async throws -> Result {
        try await metered { try await database.transaction(body) }
    }

    func exclusiveTransaction<Result: Sendable>(lock: Int64, _ body: @escaping @Sendable (any SQLTransaction) async throws -> Result) async throws -> Result {
        try await metered { try await database.exclusiveTransaction(lock: lock, body) }
    }

    func read<Result: Sendable>(_ body: @escaping @Sendable (any SQLTransaction) async throws -> Result) async throws -> Result {
        try await metered { try await database.read(body) }
    }

    func write(_ statement: SQLStatement) async throws -> [SQLRow] {
        try await metered { try await database.write(statement) }
    }

    private func metered<Result: Sendable>(_ work: () async throws -> Result) async throws -> Result {
        metrics.transactionStarted()
        defer { metrics.transactionEnded() }
        do {
            return try await work()
        } catch let error as StoreError where error.code != .duplicate {
            // A duplicate is an answer (a taken name), not a failure of the store.
            metrics.storeFailed("\(error.code)")
            throw error
        }
    }

    func ping() async throws {
        do {
            try await database.ping()
        } catch let error as StoreError {
            metrics.storeFailed("\(error.code)")
            throw error
        }
    }

    func close() async {
        await database.close()
    }
}
