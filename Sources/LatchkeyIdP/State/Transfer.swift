import Foundation
import LatchkeyWebAuthn

/// A credential transfer (device linking, docs/PROTOCOL.md section 5): an exporter that
/// proved possession of a credential, a short code for the importer, and the importer's
/// registration waiting for the exporter's signed approval. Everything sensitive it holds
/// is wiped when it ends; only its final state stays, briefly, for the two sides to read.
struct Transfer: Sendable {
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
    }

    /// The importer's registration, verified, awaiting approval.
    struct PendingImport: Sendable {
        var record: RelyingParty.RegisteredCredential
        var deviceName: String
        /// The importer's public key as a JWK (RFC 7517), and its RFC 7638 thumbprint.
        var jwk: [String: String]
        var thumbprint: String
        var nonce: Data
        var approvalChallenge: Data
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

    /// Symbols in a code, and how many of them index the transfer.
    static let codeLength = 9
    static let prefixLength = 3

    /// Wipes what the transfer holds once it ends, keeping its outcome.
    mutating func end(_ final: State, at now: Date = Date()) {
        state = final
        endedAt = now
        openChallenge = nil
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
