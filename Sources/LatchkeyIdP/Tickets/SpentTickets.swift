import Foundation

/// Single use of sealed tickets (``TicketSealer``): a ticket's id is recorded when the
/// step it allows succeeds, and kept until the ticket would have expired anyway. Only
/// requests that proved possession of a credential reach this table.
enum SpentTickets {
    /// Records `id` as spent until `expiresAt`; false when it already was (a replay).
    static func spend(_ id: String, until expiresAt: Date, in transaction: any SQLTransaction) async throws -> Bool {
        try await transaction.first("""
            INSERT INTO spent_tickets (id_hash, expires_at) VALUES (\(try ProviderContext.hash(id)), \(expiresAt))
            ON CONFLICT (id_hash) DO NOTHING RETURNING id_hash
            """) != nil
    }

    static func prune(now: Date, in transaction: any SQLTransaction) async throws {
        try await transaction.execute("DELETE FROM spent_tickets WHERE expires_at <= \(now)")
    }
}
