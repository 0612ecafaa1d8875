import Foundation

/// Mail the provider sends: written in the same transaction as the change it reports
/// (a code issued, a sign-up attempted), so a message exists exactly when its change
/// was committed. The demo and the tests read it through the admin API; real delivery
/// reads from the same table.
struct Outbox: Sendable {
    struct Message: Sendable {
        var id: Int64
        var to: String
        var subject: String
        var body: String
        var code: String?
        var createdAt: Date
    }

    /// Messages kept; older ones are dropped by housekeeping.
    static let retained: Int64 = 1000

    /// Appends a message to `recipient`; with no recipient, a decoy's row: the same
    /// statement, written as delivered with no body or code, so it is never sent or
    /// listed, and housekeeping drops it (``pruneDecoys(in:)``). A flow that must not tell
    /// whether an account exists writes one where a real account's flow writes a message.
    func append(to recipient: String?, subject: String, body: String, code: String?, now: Date = ProviderClock.now, in transaction: any SQLTransaction) async throws {
        let delivered: Date? = recipient == nil ? now : nil
        try await transaction.execute("""
            INSERT INTO outbox (recipient, subject, body, code, created_at, delivered_at)
            VALUES (\(recipient ?? ""), \(subject), \(recipient == nil ? "" : body), \(recipient == nil ? nil : code), \(now), \(delivered))
            """)
    }

    /// Drops decoys' rows.
    static func pruneDecoys(in transaction: any SQLTransaction) async throws {
        try await transaction.execute("DELETE FROM outbox WHERE recipient = ''")
    }

    /// The newest messages, oldest first (decoys' rows are not messages).
    func messages(limit: Int = 200, in transaction: any SQLTransaction) async throws -> [Message] {
        try await transaction.query("""
            SELECT id, recipient, subject, body, code, created_at FROM outbox WHERE recipient <> '' ORDER BY id DESC LIMIT \(Int64(min(max(limit, 1), 1000)))
            """).map { row in
            Message(
                id: try row.decode("id"), to: try row.decode("recipient"), subject: try row.decode("subject"), body: try row.decode("body"),
                code: try row.decode("code"), createdAt: try row.decode("created_at")
            )
        }.reversed()
    }
}
