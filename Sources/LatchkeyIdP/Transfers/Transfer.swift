import Foundation
import LatchkeyCrypto
import LatchkeyProtocol
import LatchkeyWebAuthn

/// A credential transfer (device linking, docs/PROTOCOL.md section 5): an exporter that
/// proved possession of a credential, a short code for the importer, and the importer's
/// registration waiting for the exporter's signed approval. Everything sensitive it holds
/// is wiped when it ends; only its final state stays, briefly, for the two sides to read.
struct Transfer: Sendable {
    /// Stored by its raw value, which is the protocol's name for it (``TransferState``).
    enum State: String, Sendable {
        /// Created; the exporter has not yet proved possession of its credential.
        case opening
        /// A code is out; no importer has redeemed it yet.
        case waiting
        /// An importer redeemed the code and is creating its key.
        case redeemed
        /// The importer's registration waits for the exporter's approval.
        case importRequested = "import-requested"
        case completed
        case declined
        case cancelled
        case expired
        /// Too many wrong codes: the transfer was closed.
        case failed

        var isFinal: Bool { [.completed, .declined, .cancelled, .expired, .failed].contains(self) }

        /// The state as a client reads it.
        var protocolState: TransferState { TransferState(rawValue: rawValue) }
    }

    /// The importer's registration, verified, awaiting approval.
    struct PendingImport: Sendable {
        var record: RelyingParty.RegisteredCredential
        var deviceName: String
        /// The importer's public key as a JWK (RFC 7517), and its RFC 7638 thumbprint.
        var jwk: JSONWebKey
        var thumbprint: String
        var nonce: Data
        var approvalChallenge: Data

        /// How a pending import is stored: one JSON column.
        private struct Stored: Codable {
            var credential: CredentialRecordJSON
            var deviceName: String
            var jwk: JSONWebKey
            var thumbprint: String
            var nonce: String
            var approvalChallenge: String
        }

        init(record: RelyingParty.RegisteredCredential, deviceName: String, jwk: JSONWebKey, thumbprint: String, nonce: Data, approvalChallenge: Data) {
            self.record = record
            self.deviceName = deviceName
            self.jwk = jwk
            self.thumbprint = thumbprint
            self.nonce = nonce
            self.approvalChallenge = approvalChallenge
        }

        init(column: String) throws {
            do {
                let stored = try JSONDecoder().decode(Stored.self, from: Data(column.utf8))
                record = try stored.credential.registered()
                deviceName = stored.deviceName
                jwk = stored.jwk
                thumbprint = stored.thumbprint
                nonce = try Base64URL.decode(stored.nonce)
                approvalChallenge = try Base64URL.decode(stored.approvalChallenge)
            } catch {
                throw StoreError.corruptRow("a transfer's pending import does not parse", underlying: error)
            }
        }

        var column: String {
            get throws {
                let stored = Stored(
                    credential: CredentialRecordJSON(record, identityID: ""), deviceName: deviceName, jwk: jwk, thumbprint: thumbprint,
                    nonce: Base64URL.encode(nonce), approvalChallenge: Base64URL.encode(approvalChallenge)
                )
                return String(decoding: try JSONEncoder().encode(stored), as: UTF8.self)
            }
        }
    }

    var id: String
    var identityID: String
    var exporterCredentialID: Data
    var state: State = .opening
    var expiresAt: Date
    /// When a final state was reached (final records are pruned a minute later).
    var endedAt: Date?

    var openChallenge: Data?
    var exporterTokenHash: Data?
    /// The code: its first symbols find the transfer, the rest are checked as a secret.
    var codePrefix: String?
    var codeSecretHash: Data?
    var codeExpiresAt: Date = .distantPast
    /// The code shown to the exporter (kept only while it is live).
    var code: String?
    var failedAttempts = 0

    var importerTokenHash: Data?
    var registrationChallenge: Data?
    var pending: PendingImport?
    var boundCredentialID: Data?

    init(id: String, identityID: String, exporterCredentialID: Data, expiresAt: Date) {
        self.id = id
        self.identityID = identityID
        self.exporterCredentialID = exporterCredentialID
        self.expiresAt = expiresAt
    }

    static let columns = """
        id, identity_id, exporter_credential_id, state, expires_at, ended_at, open_challenge, exporter_token_hash, code_prefix, \
        code_secret_hash, code_expires_at, code, failed_attempts, importer_token_hash, registration_challenge, pending_import, bound_credential_id
        """

    init(row: SQLRow) throws {
        id = try row.decode("id", as: String.self)
        identityID = try row.decode("identity_id", as: String.self)
        exporterCredentialID = try row.decode("exporter_credential_id", as: Data.self)
        guard let state = State(rawValue: try row.decode("state", as: String.self)) else { throw StoreError.corruptRow("a transfer has an unknown state") }
        self.state = state
        expiresAt = try row.decode("expires_at", as: Date.self)
        endedAt = try row.decode("ended_at", as: Date?.self)
        openChallenge = try row.decode("open_challenge", as: Data?.self)
        exporterTokenHash = try row.decode("exporter_token_hash", as: Data?.self)
        codePrefix = try row.decode("code_prefix", as: String?.self)
        codeSecretHash = try row.decode("code_secret_hash", as: Data?.self)
        codeExpiresAt = try row.decode("code_expires_at", as: Date.self)
        code = try row.decode("code", as: String?.self)
        failedAttempts = try row.decode("failed_attempts", as: Int.self)
        importerTokenHash = try row.decode("importer_token_hash", as: Data?.self)
        registrationChallenge = try row.decode("registration_challenge", as: Data?.self)
        pending = try row.decode("pending_import", as: String?.self).map(PendingImport.init(column:))
        boundCredentialID = try row.decode("bound_credential_id", as: Data?.self)
    }

    /// Writes every column (an insert the first time).
    func save(in transaction: any SQLTransaction) async throws {
        try await transaction.execute("""
            INSERT INTO transfers (\(raw: Self.columns))
            VALUES (\(id), \(identityID), \(exporterCredentialID), \(state.rawValue), \(expiresAt), \(endedAt), \(openChallenge),
                \(exporterTokenHash), \(codePrefix), \(codeSecretHash), \(codeExpiresAt), \(code), \(failedAttempts),
                \(importerTokenHash), \(registrationChallenge), \(try pending?.column), \(boundCredentialID))
            ON CONFLICT (id) DO UPDATE SET state = excluded.state, expires_at = excluded.expires_at, ended_at = excluded.ended_at,
                open_challenge = excluded.open_challenge, exporter_token_hash = excluded.exporter_token_hash,
                code_prefix = excluded.code_prefix, code_secret_hash = excluded.code_secret_hash,
                code_expires_at = excluded.code_expires_at, code = excluded.code, failed_attempts = excluded.failed_attempts,
                importer_token_hash = excluded.importer_token_hash, registration_challenge = excluded.registration_challenge,
                pending_import = excluded.pending_import, bound_credential_id = excluded.bound_credential_id
            """)
    }

    /// Symbols in a code, and how many of them index the transfer.
    static let codeLength = 9
    static let prefixLength = 3

    /// Wipes what the transfer holds once it ends, keeping its outcome.
    mutating func end(_ final: State, at now: Date = ProviderClock.now) {
        state = final
        endedAt = now
        openChallenge = nil
        codePrefix = nil
        codeSecretHash = nil
        code = nil
        registrationChallenge = nil
        pending = nil
    }

    /// `XXX-XXX-XXX`.
    static func display(_ symbols: String) -> String {
        let characters = Array(symbols)
        return stride(from: 0, to: characters.count, by: 3).map { String(characters[$0..<min($0 + 3, characters.count)]) }.joined(separator: "-")
    }
}
