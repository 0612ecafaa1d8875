import Foundation
import LatchkeyCrypto
import LatchkeyProtocol
import Synchronization

/// The SSH CA's keys and their rotation (docs/PROTOCOL.md section 12, "Rotating the CA";
/// `latchkey admin rotate-ssh-ca`). Each key is a sealed store secret (ES256, so
/// `ecdsa-sha2-nistp256`) with a row in `ssh_ca_keys` saying what it is now:
///
/// - `current`: the one key that signs (one row; the provider's first key is named
///   ``SSHAuthority/keyName``);
/// - `next`: made by the first step of a rotation and published beside the current one,
///   so that hosts add it to `TrustedUserCAKeys` before it signs anything;
/// - `previous`: retired by the second step, published (and its certificates kept on the
///   KRL) until the longest lifetime a certificate it signed can have has passed.
///
/// Every certificate records the key that signed it (`ssh_certificates.ca_key`), so the
/// KRL lists each revoked serial under its own CA key. Every instance reads which key is
/// current in the transaction that records a certificate, so a rotation made on one
/// instance is followed by the others at once; the parsed keys are kept here.
final class SSHAuthorityKeyRing: Sendable {
    private let database: any ProviderDatabase
    private let sealing: StoreSealing
    private let parsed = Mutex<[String: SigningKey]>([:])

    /// A key's role.
    enum State: String, Sendable {
        case next, current, previous
    }

    /// A key as the ring lists it.
    struct Key: Sendable {
        var name: String
        var state: State
        var publicKey: SSHPublicKey
        var retiredAt: Date?
    }

    init(database: any ProviderDatabase, sealing: StoreSealing) {
        self.database = database
        self.sealing = sealing
    }

    /// Makes sure a current key exists: the provider's first key (made now if the store
    /// has none), recorded as current. Called when the store is prepared.
    func ensureCurrent(now: Date) async throws {
        if try await database.read({ try await $0.first("SELECT name FROM ssh_ca_keys WHERE state = \(State.current.rawValue)") }) != nil { return }
        let key = try await signingKey(named: SSHAuthority.keyName, creating: true)
        let line = try SSHPublicKey(key.publicKey).openSSHLine(comment: nil)
        try await database.transaction { transaction in
            guard try await transaction.first("SELECT name FROM ssh_ca_keys WHERE state = \(State.current.rawValue)") == nil else { return }
            try await transaction.execute("""
                INSERT INTO ssh_ca_keys (name, state, public_key, created_at, activated_at) VALUES (\(SSHAuthority.keyName), \(State.current.rawValue), \(line), \(now), \(now))
                ON CONFLICT (name) DO NOTHING
                """)
        }
    }

    /// The sealed key `name`, parsed once; made only when `creating` (the first key, a
    /// staged one). A key the ring records but the store no longer holds is an error, never
    /// silently replaced: a new key under the old name would sign certificates no host
    /// trusts while the old line stays published.
    func signingKey(named name: String, creating: Bool = false) async throws -> SigningKey {
        if let known = parsed.withLock({ $0[name] }) { return known }
        let key: SigningKey
        if creating {
            key = try await sealing.signingKey(named: name, in: database)
        } else {
            guard let der = try await sealing.existingValue(named: name, in: database) else {
                throw ProviderError.temporarilyUnavailable("the SSH CA key \(name) is missing from the store; restore it, or rotate to a new one")
            }
            key = try SigningKey(pkcs8DER: der)
        }
        parsed.withLock { $0[name] = key }
        return key
    }

    /// The name of the key that signs now, read in `transaction`.
    static func currentName(in transaction: any SQLTransaction) async throws -> String {
        guard let row = try await transaction.first("SELECT name FROM ssh_ca_keys WHERE state = \(State.current.rawValue)") else {
            throw ProviderError.temporarilyUnavailable("the provider's SSH CA is not ready")
        }
        return try row.decode("name", as: String.self)
    }

    /// The key that signs now.
    func current() async throws -> (name: String, key: SigningKey) {
        let name = try await database.read { try await Self.currentName(in: $0) }
        return (name, try await signingKey(named: name))
    }

    /// Every key, current first, then the next one, then the previous ones, newest first.
    func keys() async throws -> [Key] {
        let rows = try await database.read { transaction in
            try await transaction.query("SELECT name, state, public_key, retired_at FROM ssh_ca_keys")
        }
        let order: [State: Int] = [.current: 0, .next: 1, .previous: 2]
        return try rows.map { row in
            guard let state = State(rawValue: try row.decode("state", as: String.self)) else {
                throw StoreError.corruptRow("an SSH CA key's state is not next, current or previous")
            }
            return Key(
                name: try row.decode("name", as: String.self), state: state,
                publicKey: try SSHPublicKey(openSSHLine: try row.decode("public_key", as: String.self)),
                retiredAt: try row.decode("retired_at", as: Date?.self)
            )
        }.sorted { (order[$0.state] ?? 3, -($0.retiredAt?.timeIntervalSince1970 ?? 0)) < (order[$1.state] ?? 3, -($1.retiredAt?.timeIntervalSince1970 ?? 0)) }
    }

    /// The keys hosts must trust now: the current one, the next one while a rotation
    /// waits, and each previous one until every certificate it could have signed expired.
    func published(now: Date) async throws -> [Key] {
        try await keys().filter { key in
            key.state != .previous || (key.retiredAt.map { now.timeIntervalSince($0) < ProviderConfiguration.maximumSSHCertificateLifetime } ?? false)
        }
    }

    /// The first step of a rotation: a next key, made and published beside the current
    /// one (the one already waiting, if a rotation was begun and not finished).
    func stage(now: Date, audit: AuditLog) async throws -> Key {
        if let waiting = try await keys().first(where: { $0.state == .next }) { return waiting }
        let name = SSHAuthority.keyName + "-" + UUID().uuidString.lowercased()
        let key = try await signingKey(named: name, creating: true)
        let publicKey = try SSHPublicKey(key.publicKey)
        try await database.transaction { transaction in
            // Another instance may have staged one meanwhile: that one stays, this key is unused.
            guard try await transaction.first("SELECT name FROM ssh_ca_keys WHERE state = \(State.next.rawValue)") == nil else { return }
            try await transaction.execute("""
                INSERT INTO ssh_ca_keys (name, state, public_key, created_at) VALUES (\(name), \(State.next.rawValue), \(publicKey.openSSHLine(comment: nil)), \(now))
                """)
            try await audit.record(AuditEntry(
                .sshAuthorityStaged, actor: .admin, details: AuditEvent.Details(fingerprint: publicKey.fingerprint), now: now
            ), in: transaction)
        }
        guard let staged = try await keys().first(where: { $0.state == .next }) else {
            throw ProviderError.temporarilyUnavailable("the next SSH CA key could not be recorded; try again")
        }
        return staged
    }

    /// The second step: the next key signs from now on, and the current one is retired,
    /// published and on the KRL until its certificates have expired. 409 when no rotation
    /// was begun.
    func activate(now: Date, audit: AuditLog) async throws {
        try await database.transaction { transaction in
            guard let next = try await transaction.first("SELECT name, public_key FROM ssh_ca_keys WHERE state = \(State.next.rawValue)") else {
                throw ProviderError.conflict("no next SSH CA key waits: begin with latchkey admin rotate-ssh-ca, publish both lines to every host, then --activate")
            }
            let fingerprint = try SSHPublicKey(openSSHLine: try next.decode("public_key", as: String.self)).fingerprint
            try await transaction.execute("""
                UPDATE ssh_ca_keys SET state = \(State.previous.rawValue), retired_at = \(now) WHERE state = \(State.current.rawValue)
                """)
            try await transaction.execute("""
                UPDATE ssh_ca_keys SET state = \(State.current.rawValue), activated_at = \(now) WHERE name = \(try next.decode("name", as: String.self))
                """)
            try await audit.record(AuditEntry(
                .sshAuthorityActivated, actor: .admin, details: AuditEvent.Details(fingerprint: fingerprint), now: now
            ), in: transaction)
        }
    }
}
