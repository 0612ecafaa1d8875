import Foundation
import LatchkeyOAuth
import LatchkeyProtocol

/// Every POSIX ID the provider ever handed out, users' and groups' alike, kept for good:
/// an ID is allocated once and never again, whatever happens to its owner (a deleted
/// identity or group, a rename, a range changed since). Docs/PROTOCOL.md section 14.
///
/// An ID is the one after the largest the ledger holds within the configured range, so a
/// gap left by a range moved or an allocation rolled back is skipped, never filled.
/// Allocations take ``lockKey`` (``ProviderDatabase/exclusiveTransaction(lock:_:)``):
/// instances allocating at once on PostgreSQL take turns, and the `id` primary key
/// refuses a duplicate if anything ever slipped past the lock.
struct POSIXIDLedger: Sendable {
    let range: POSIXIDRange

    /// The advisory lock every transaction that allocates an ID holds.
    static let lockKey = Int64(0x4C4B_504F_5349_5849)

    enum Kind: String, Sendable {
        case user
        case group
    }

    /// A new ID for `owner` (an identity id, a group name), recorded in the ledger.
    /// Call within a transaction holding ``lockKey``.
    func allocate(_ kind: Kind, owner: String, now: Date, in transaction: any SQLTransaction) async throws -> Int64 {
        let row = try await transaction.first("""
            SELECT max(id) AS top FROM posix_ids WHERE id >= \(range.first) AND id <= \(range.last)
            """)
        let top = try row?.decode("top", as: Int64?.self)
        let next = top.map { $0 + 1 } ?? range.first
        guard next <= range.last else {
            throw ProviderError(
                .conflict, code: .posixIDsExhausted,
                reason: "no POSIX ID is left in \(range) (IDs are never reused); start the provider with a wider --posix-uid-range"
            )
        }
        try await transaction.execute("""
            INSERT INTO posix_ids (id, kind, owner, allocated_at) VALUES (\(next), \(kind.rawValue), \(owner), \(now))
            """)
        return next
    }

    /// The user ID allocated to `identityID` before (an account unset and set again gets
    /// it back), or nil.
    func userID(of identityID: String, in transaction: any SQLTransaction) async throws -> Int64? {
        try await transaction.first("""
            SELECT id FROM posix_ids WHERE kind = 'user' AND owner = \(identityID) ORDER BY id LIMIT 1
            """)?.decode("id", as: Int64.self)
    }
}
