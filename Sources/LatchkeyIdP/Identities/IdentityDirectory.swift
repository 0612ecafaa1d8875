import Foundation
import LatchkeyProtocol
import LatchkeyOAuth

/// Identities and their names (docs/ARCHITECTURE.md, "The provider"). Names are unique
/// by ``Username/key(_:)`` and by look-alike ``Username/skeleton(_:)``, both enforced by
/// unique indexes, so two instances creating look-alike names at once cannot both win.
struct IdentityDirectory: Sendable {
    /// Names no identity may take (``ReservedUsernames``).
    let reserved: ReservedUsernames

    /// Creates an identity; 409 when the name, or one that looks the same, is taken.
    func create(
        username: String, email: String?, displayName: String?, requiredAttestation: AttestationRequirement? = nil, now: Date = ProviderClock.now,
        in transaction: any SQLTransaction
    ) async throws -> Identity {
        let name = try Username.validated(username)
        try reserved.check(username)
        if let email {
            guard email.utf8.count <= 254, !email.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw ProviderError.badRequest(.invalidRequest, "email must be at most 254 printable characters")
            }
        }
        let display = displayName ?? name
        guard display.utf8.count <= 256, !display.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw ProviderError.badRequest(.invalidRequest, "displayName must be at most 256 printable characters")
        }
        guard try await !isTaken(username, in: transaction) else { throw Self.taken }
        let identity = Identity(
            id: UUID().uuidString.lowercased(), username: name, email: email, displayName: display, createdAt: now, requiredAttestation: requiredAttestation
        )
        do {
            try await transaction.execute("""
                INSERT INTO identities (id, username, username_key, username_skeleton, email, display_name, created_at, require_attestation)
                VALUES (\(identity.id), \(name), \(Username.key(name)), \(Username.skeleton(name)), \(email), \(display), \(now),
                    \(requiredAttestation?.rawValue))
                """)
        } catch let error as StoreError where error.code == .duplicate {
            throw Self.taken
        }
        return identity
    }

    static let taken = ProviderError.conflict("username already exists, or one that looks the same")

    /// Whether `name` (as typed, or as stored), or a name that looks the same, is taken.
    func isTaken(_ name: String, in transaction: any SQLTransaction) async throws -> Bool {
        for skeleton in Username.skeletons(ofTyped: name) {
            if try await transaction.first("SELECT 1 FROM identities WHERE username_skeleton = \(skeleton)") != nil { return true }
        }
        return false
    }

    /// The identity called `name`, compared as ``Username/key(_:)``.
    func named(_ name: String, in transaction: any SQLTransaction) async throws -> Identity? {
        try await transaction.first("SELECT \(raw: Identity.columns) FROM identities WHERE username_key = \(Username.key(name))").map(Identity.init(row:))
    }

    func identity(_ id: String, in transaction: any SQLTransaction) async throws -> Identity? {
        try await transaction.first("SELECT \(raw: Identity.columns) FROM identities WHERE id = \(id)").map(Identity.init(row:))
    }

    /// A page of identities in creation order, after `cursor` (an identity id): the
    /// index on (created_at, id) serves any page at the same cost.
    func list(after cursor: String?, limit: Int, in transaction: any SQLTransaction) async throws -> [Identity] {
        let limit = Int64(min(max(limit, 1), 500))
        var after = (Int64.min, "")
        if let cursor, let row = try await transaction.first("SELECT created_at, id FROM identities WHERE id = \(cursor)") {
            after = (try row.decode("created_at", as: Int64.self), try row.decode("id", as: String.self))
        }
        return try await transaction.query("""
            SELECT \(raw: Identity.columns) FROM identities
            WHERE created_at > \(after.0) OR (created_at = \(after.0) AND id > \(after.1))
            ORDER BY created_at, id LIMIT \(limit)
            """).map(Identity.init(row:))
    }

    /// Deletes an identity; the schema's cascades delete its credentials, bind jobs,
    /// transfers, grant families and tokens in the same statement, so its tokens stop
    /// working at once, on every instance (RFC 9700 §4.14). The SSH principals granted to
    /// it go too; its SSH certificates stay recorded, for the KRL.
    func delete(_ id: String, in transaction: any SQLTransaction) async throws -> Bool {
        guard try await transaction.first("DELETE FROM identities WHERE id = \(id) RETURNING id") != nil else { return false }
        try await transaction.execute("DELETE FROM ssh_principals WHERE identity_id = \(id)")
        // Hosts stop seeing it; its uid stays in the ledger, never handed out again.
        _ = try await POSIXAccounts.forget(id, in: transaction)
        return true
    }

    /// The identity `idOrName` names: an identity id first, else a username (as names
    /// are compared). What every admin command taking `ID|USERNAME` means.
    func resolve(_ idOrName: String, in transaction: any SQLTransaction) async throws -> Identity? {
        guard idOrName.utf8.count <= 256 else { return nil }
        if let identity = try await identity(idOrName, in: transaction) { return identity }
        return try await named(idOrName, in: transaction)
    }

    /// Gives `identity` a new username, under the rules of ``create(username:email:displayName:requiredAttestation:now:in:)``:
    /// reserved names and names taken by another identity (or looking like one) are
    /// refused. Its id, credentials, grants and POSIX `uid` stay; an identity with a POSIX
    /// account may take only a POSIX name no group has.
    func rename(_ identity: Identity, to username: String, in transaction: any SQLTransaction) async throws -> Identity {
        let name = try Username.validated(username)
        try reserved.check(name)
        for skeleton in Username.skeletons(ofTyped: name) {
            let holders = try await transaction.query("SELECT id FROM identities WHERE username_skeleton = \(skeleton)")
            if try holders.contains(where: { try $0.decode("id", as: String.self) != identity.id }) { throw Self.taken }
        }
        do {
            try await transaction.execute("""
                UPDATE identities SET username = \(name), username_key = \(Username.key(name)), username_skeleton = \(Username.skeleton(name))
                WHERE id = \(identity.id)
                """)
        } catch let error as StoreError where error.code == .duplicate {
            throw Self.taken
        }
        var renamed = identity
        renamed.username = name
        return renamed
    }
}
