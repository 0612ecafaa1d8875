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

    /// `tpm` when the registration carried a verified `tpm` statement, `none` otherwise
    /// (`packed` self attestation proves nothing about where the key lives).
    var attestation: String {
        (record.attestationFormat == AttestationStatementFormat.tpm.rawValue ? AttestationStatementFormat.tpm : .none).rawValue
    }

    /// The AAGUID as a lower-case UUID (8-4-4-4-12 hex digits).
    var aaguidText: String {
        let hex = record.aaguid.map { String(format: "%02x", $0) }.joined()
        guard hex.count == 32 else { return hex }
        var text = ""
        for (index, character) in hex.enumerated() {
            if [8, 12, 16, 20].contains(index) { text.append("-") }
            text.append(character)
        }
        return text
    }

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

    init(identityID: String, record: RelyingParty.RegisteredCredential, revokedAt: Date? = nil, createdAt: Date = ProviderClock.now, lastUsedAt: Date? = nil) {
        self.identityID = identityID
        self.record = record
        self.revokedAt = revokedAt
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }

    init(row: SQLRow) throws {
        let signCount = try row.decode("sign_count", as: Int64.self)
        guard let counter = UInt32(exactly: signCount) else {
            throw StoreError.corruptRow("a credential's signature counter is out of range")
        }
        let publicKey: COSEKey
        do {
            publicKey = try COSEKeyCache.key(try row.decode("public_key", as: Data.self))
        } catch {
            throw StoreError.corruptRow("a credential's public key does not parse", underlying: error)
        }
        let transports = try row.decode("transports", as: String.self)
        record = RelyingParty.RegisteredCredential(
            id: try row.decode("id", as: Data.self), publicKey: publicKey, signCount: counter, backupEligible: try row.decode("backup_eligible", as: Bool.self),
            backupState: try row.decode("backup_state", as: Bool.self), userVerified: try row.decode("user_verified", as: Bool.self), attestationFormat: try row.decode("attestation_format", as: String.self),
            aaguid: try row.decode("aaguid", as: Data.self), transports: transports.isEmpty ? [] : transports.split(separator: ",").map(String.init)
        )
        identityID = try row.decode("identity_id", as: String.self)
        revokedAt = try row.decode("revoked_at", as: Date?.self)
        createdAt = try row.decode("created_at", as: Date.self)
        lastUsedAt = try row.decode("last_used_at", as: Date?.self)
        guard let origin = Origin(rawValue: try row.decode("registered_from", as: String.self)) else {
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
