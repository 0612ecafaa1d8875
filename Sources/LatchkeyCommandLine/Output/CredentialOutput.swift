#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey
import LatchkeyProtocol
import LatchkeyCrypto

/// A credential as `--json` shows it (`bind`, `list`, `import`, `signup`, `recover`).
struct CredentialOutput: Encodable {
    struct User: Encodable {
        var id: String
        var name: String
        var displayName: String
    }

    var id: String
    var rpID: String
    var user: User
    var createdAt: String
    var signCount: Int
    var state: String
    var algorithm: String
    var issuer: String?
    var lastUsedAt: String?
    /// `software` or `tpm`.
    var keyProtection: String
    /// `tpm` when the key was registered with TPM attestation, else `none`.
    var attestation: String
    /// False when a check found the key cannot sign on this host (`list`); the reason says why.
    var usable: Bool
    var unusableReason: String?

    init(_ credential: Credential) {
        id = credential.id
        rpID = credential.rpID
        user = User(id: credential.user.id, name: credential.user.name, displayName: credential.user.displayName)
        createdAt = AuditEvent.formatTime(credential.createdAt)
        signCount = Int(credential.signCount)
        state = credential.state.rawValue
        algorithm = credential.algorithm
        attestation = credential.attestation
        issuer = credential.issuer?.absoluteString
        lastUsedAt = credential.lastUsedAt.map { AuditEvent.formatTime($0) }
        keyProtection = credential.keyProtection.rawValue
        usable = credential.unusableReason == nil
        unusableReason = credential.unusableReason
    }
}

/// `{"credential": …}` (`signup`, `recover`), with the post-binding redirect for `bind`.
struct BoundCredentialOutput: Encodable {
    var credential: CredentialOutput
    var postBindingRedirectURI: String?
}

/// `{"credentials": […]}` (`import`).
struct CredentialsOutput: Encodable {
    var credentials: [CredentialOutput]
}

/// `list --json`: the credentials, and the vault records that could not be read.
struct CredentialListOutput: Encodable {
    struct Damaged: Encodable {
        var handle: String
        var reason: String
    }

    var credentials: [CredentialOutput]
    var damaged: [Damaged]

    init(_ scan: CredentialScan) {
        credentials = scan.credentials.map(CredentialOutput.init)
        damaged = scan.damaged.map { Damaged(handle: $0.handle, reason: $0.reason) }
    }
}

/// `delete --json`.
struct DeletionOutput: Encodable {
    var id: String
    var deleted: Bool
}
