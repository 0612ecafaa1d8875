import Foundation
import LatchkeyCrypto
import LatchkeyWebAuthn

/// A credential bound to an identity: the WebAuthn record (§7.1 step 27) and whether it
/// was revoked.
struct StoredCredential: Sendable {
    var identityID: String
    var record: RelyingParty.RegisteredCredential
    var revokedAt: Date?
    var createdAt: Date
    var lastUsedAt: Date?

    var revoked: Bool { revokedAt != nil }

    /// Where it was registered: ``Origin/client`` or ``Origin/browser``.
    var registeredFrom: Origin = .client

    /// The two places a credential is registered from (migration 7).
    enum Origin: String, Sendable {
        /// A client of the JSON API: the Latchkey CLI or facade, or another.
        case client
        /// The registration page in a browser (docs/PROTOCOL.md section 9).
        case browser
    }

    /// The columns ``init(row:)`` reads, in order.
    static let columns = """
        id, identity_id, public_key, sign_count, backup_eligible, backup_state, user_verified, \
        attestation_format, aaguid, transports, revoked_at, created_at, last_used_at, registered_from
        """

    init(identityID: String, record: RelyingParty.RegisteredCredential, revokedAt: Date? = nil, createdAt: Date = Date(), lastUsedAt: Date? = nil) {
        self.identityID = identityID
        self.record = record
        self.revokedAt = revokedAt
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }

    init(row: SQLRow) throws {
        let signCount = try row.int(3)
        guard let counter = UInt32(exactly: signCount) else {
            throw StoreError.corruptRow("a credential's signature counter is out of range")
        }
        let publicKey: COSEKey
        do {
            publicKey = try COSEKey(encoded: try row.blob(2))
        } catch {
            throw StoreError.corruptRow("a credential's public key does not parse", underlying: error)
        }
        let transports = try row.text(9)
        record = RelyingParty.RegisteredCredential(
            id: try row.blob(0), publicKey: publicKey, signCount: counter, backupEligible: try row.bool(4),
            backupState: try row.bool(5), userVerified: try row.bool(6), attestationFormat: try row.text(7),
            aaguid: try row.blob(8), transports: transports.isEmpty ? [] : transports.split(separator: ",").map(String.init)
        )
        identityID = try row.text(1)
        revokedAt = try row.optionalDate(10)
        createdAt = try row.date(11)
        lastUsedAt = try row.optionalDate(12)
        guard let origin = Origin(rawValue: try row.text(13)) else {
            throw StoreError.corruptRow("a credential's registered_from is neither client nor browser")
        }
        registeredFrom = origin
    }
}

/// A registered credential as JSON: what a transfer keeps of the importer's verified
/// registration until the exporter approves it, and what an earlier version's `state.json` held.
struct CredentialRecordJSON: Codable, Sendable {
    var id: String
    var identityID: String
    var publicKey: String
    var signCount: UInt32
    var backupEligible: Bool
    var backupState: Bool
    var userVerified: Bool
    var attestationFormat: String
    var aaguid: String
    var transports: [String]
    var revoked: Bool

    init(_ record: RelyingParty.RegisteredCredential, identityID: String, revoked: Bool = false) {
        id = Base64URL.encode(record.id)
        self.identityID = identityID
        publicKey = Base64URL.encode(record.publicKey.encoded)
        signCount = record.signCount
        backupEligible = record.backupEligible
        backupState = record.backupState
        userVerified = record.userVerified
        attestationFormat = record.attestationFormat
        aaguid = Base64URL.encode(record.aaguid)
        transports = record.transports
        self.revoked = revoked
    }

    func registered() throws -> RelyingParty.RegisteredCredential {
        RelyingParty.RegisteredCredential(
            id: try Base64URL.decode(id), publicKey: try COSEKey(encoded: Base64URL.decode(publicKey)),
            signCount: signCount, backupEligible: backupEligible, backupState: backupState,
            userVerified: userVerified, attestationFormat: attestationFormat,
            aaguid: try Base64URL.decode(aaguid), transports: transports
        )
    }
}
