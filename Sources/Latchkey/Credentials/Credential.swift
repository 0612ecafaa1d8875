#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto
import LatchkeyWebAuthn

/// A passkey-style credential in this host's vault: a device key pair bound to one user at
/// one identity provider (Beyond Identity's `Passkey`, WebAuthn's public key credential
/// source, §4).
public struct Credential: Hashable, Identifiable, Sendable {
    /// The user the credential signs in as (WebAuthn §5.4.3 `user`).
    public struct User: Hashable, Sendable {
        /// The user handle, base64url (the provider's opaque id for the user).
        public var id: String
        public var name: String
        public var displayName: String
    }

    /// Whether the credential can still sign in. Open-ended.
    public struct State: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let active = State("active")
        /// The provider refused it as revoked; it stays listed until deleted.
        public static let revoked = State("revoked")
        /// Created and sent to the provider, whose answer never arrived (the process
        /// stopped mid-bind or mid-import), so it may or may not be bound there. It signs
        /// in only when the provider lists it or the caller names it, and becomes active
        /// on its first successful sign-in; delete it if the provider never bound it.
        public static let pending = State("pending")
    }

    /// The WebAuthn credential ID, base64url: the id the provider knows it by too.
    public var id: String
    /// The identity provider (issuer) it was bound at.
    public var issuer: URL?
    /// The WebAuthn relying party ID.
    public var rpID: String
    public var user: User
    public var createdAt: Date
    public var lastUsedAt: Date?
    /// The WebAuthn signature counter (§6.1.1), bumped before each assertion.
    public var signCount: UInt32
    public var state: State
    /// `ES256` or `EdDSA`.
    public var algorithm: String
    /// Where the private key lives: in the vault file, or in the host's TPM.
    public var keyProtection: KeyProtection
    /// Why the key cannot sign on this host, when a check found so
    /// (``Embedded/scanCredentials(checkingKeys:)``): a TPM key made by another TPM, or
    /// before this one was cleared, or no TPM answering. Nil when usable or not checked.
    /// The credential stays in the vault either way.
    public var unusableReason: String?

    /// The vault record holding the key.
    let handle: KeyHandle
    /// ``id``'s bytes.
    let credentialID: Data

    /// How the credential was registered: `tpm` when its key was certified by the TPM's
    /// attestation key (``CredentialAttestation/tpm(authority:)``), `none` otherwise.
    public var attestation: String

    /// Attribute names in ``CredentialMetadata/attributes``.
    enum Attribute {
        static let issuer = "issuer"
        static let state = "state"
        static let attestation = "attestation"
    }

    /// The attributes of a credential being created at `issuer`: pending until the
    /// provider answers, so a process killed in between leaves a key that says so.
    static func newAttributes(issuer: ProviderAddress, attested: Bool) -> [String: String] {
        var attributes = [Attribute.issuer: issuer.issuer, Attribute.state: State.pending.rawValue]
        if attested { attributes[Attribute.attestation] = AttestationStatementFormat.tpm.rawValue }
        return attributes
    }

    init(_ credential: SoftwareAuthenticator.Credential) {
        let metadata = credential.metadata
        id = metadata.credentialID.description
        issuer = metadata.attributes[Attribute.issuer].flatMap(URL.init(string:))
        rpID = metadata.rpID
        user = User(id: metadata.userHandle.description, name: metadata.userName, displayName: metadata.userDisplayName)
        createdAt = metadata.createdAt
        lastUsedAt = metadata.lastUsedAt
        signCount = metadata.signCount
        state = metadata.attributes[Attribute.state].map(State.init) ?? .active
        algorithm = credential.algorithm.joseName
        keyProtection = credential.protection
        let tpm = AttestationStatementFormat.tpm.rawValue
        attestation = metadata.attributes[Attribute.attestation] == tpm ? tpm : AttestationStatementFormat.none.rawValue
        handle = credential.handle
        credentialID = metadata.credentialID.data
    }

    /// Whether it was bound at `provider`.
    func belongs(to provider: ProviderAddress) -> Bool {
        guard let issuer else { return false }
        return (try? ProviderAddress(issuer))?.issuer == provider.issuer
    }
}

extension Credential {
    /// The order credentials are listed and offered in: oldest first, ties by id, so a
    /// listing is stable across calls.
    static func oldestFirst(_ lhs: Credential, _ rhs: Credential) -> Bool {
        (lhs.createdAt, lhs.id) < (rhs.createdAt, rhs.id)
    }
}
