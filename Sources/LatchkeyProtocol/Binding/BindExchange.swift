public import LatchkeyWebAuthn

/// Binding a credential from a bind URL (docs/PROTOCOL.md section 2).
public enum BindExchange {
    /// `GET <bind URL>`: the creation options and where the registration goes.
    public struct Challenge: Codable, Hashable, Sendable {
        public var publicKey: PublicKeyCredentialCreationOptionsJSON
        public var submit: String

        public init(publicKey: PublicKeyCredentialCreationOptionsJSON, submit: String) {
            self.publicKey = publicKey
            self.submit = submit
        }
    }

    /// `201` to the `RegistrationResponseJSON`: the bound credential, and where the
    /// administrator wants the user to go next.
    public struct Result: Codable, Hashable, Sendable {
        public var credential: CredentialReference
        public var postBindingRedirectURI: String?

        public init(credential: CredentialReference, postBindingRedirectURI: String? = nil) {
            self.credential = credential
            self.postBindingRedirectURI = postBindingRedirectURI
        }
    }
}

/// A credential a provider confirms (bound, imported): its ID, base64url, and for a bind
/// the identity it now signs in as.
public struct CredentialReference: Codable, Hashable, Sendable {
    public var id: String
    public var identity: String?

    public init(id: String, identity: String? = nil) {
        self.id = id
        self.identity = identity
    }
}
