import Foundation
import LatchkeyCrypto
import LatchkeyProtocol

/// Pages of the sealed audit log for the admin API (`GET /admin/events`), oldest first:
/// cursor pagination on the event id, so a reader that follows the log (`latchkey admin
/// events --follow`) asks for what came after the last id it showed and misses nothing.
struct AuditReader: Sendable {
    let database: any ProviderDatabase

    struct Filter: Sendable {
        var after: Int64 = 0
        var limit = 100
        var type: AuditEventType?
        var subject: String?
        var since: Date?
    }

    /// The kept checkpoints, oldest first (`GET /admin/events/checkpoints`).
    func checkpoints() async throws -> [AdminAPI.EventCheckpoint] {
        try await database.read { transaction in
            try await transaction.query("SELECT seq, chain_hash, signature FROM audit_checkpoints ORDER BY seq")
        }.map { row in
            AdminAPI.EventCheckpoint(
                id: try row.decode("seq", as: Int64.self), hash: Base64URL.encode(try row.decode("chain_hash", as: Data.self)),
                signature: try row.decode("signature", as: String.self)
            )
        }
    }

    func page(_ filter: Filter) async throws -> AdminAPI.EventPage {
        let limit = min(max(filter.limit, 1), AdminAPI.EventQuery.maximumLimit)
        let type = filter.type?.rawValue
        let subject = filter.subject
        let since = filter.since
        let rows = try await database.read { transaction in
            try await transaction.query("""
                SELECT seq, chain_hash, \(raw: AuditLog.columns) FROM audit_events
                WHERE seq > \(filter.after)
                    AND (CAST(\(type) AS TEXT) IS NULL OR event_type = \(type))
                    AND (CAST(\(subject) AS TEXT) IS NULL OR subject = \(subject))
                    AND (CAST(\(since) AS BIGINT) IS NULL OR occurred_at >= \(since))
                ORDER BY seq LIMIT \(limit)
                """)
        }
        let events = try rows.map { row in
            try AuditEntry(row: row).event(id: try row.decode("seq", as: Int64.self), hash: try row.decode("chain_hash", as: Data?.self))
        }
        return AdminAPI.EventPage(events: events, next: events.count == limit ? events.last?.id : nil)
    }
}
