import Synchronization

/// How many transactions and statements the provider ran on its store, counted by the
/// engine itself (docs/PERFORMANCE.md states the count per sign-in, and a test holds it).
/// Statements are the provider's own; BEGIN, COMMIT and savepoints are not counted.
final class StoreStatistics: Sendable {
    private let statementTotal = Atomic<Int>(0)
    private let transactionTotal = Atomic<Int>(0)

    var statements: Int { statementTotal.load(ordering: .relaxed) }
    var transactions: Int { transactionTotal.load(ordering: .relaxed) }

    func countStatement() {
        statementTotal.add(1, ordering: .relaxed)
    }

    func countTransaction() {
        transactionTotal.add(1, ordering: .relaxed)
    }
}
