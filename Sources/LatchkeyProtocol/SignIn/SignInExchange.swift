public import LatchkeyWebAuthn

/// Signing in (docs/PROTOCOL.md section 3): `/authorize` names the authenticate URL, which
/// gives request options and takes the assertion.
public enum SignInExchange {
    /// `GET /authorize` with `Accept: application/json`.
    public struct Started: Codable, Hashable, Sendable {
        public var authenticateURL: String

        public init(authenticateURL: String) {
            self.authenticateURL = authenticateURL
        }
    }

    /// `GET <authenticateURL>`: the request options, where the assertion goes, and the
    /// OAuth client the sign-in is for.
    public struct Challenge: Codable, Hashable, Sendable {
        public var publicKey: PublicKeyCredentialRequestOptionsJSON
        public var submit: String
        public var application: String?

        public init(publicKey: PublicKeyCredentialRequestOptionsJSON, submit: String, application: String?) {
            self.publicKey = publicKey
            self.submit = submit
            self.application = application
        }
    }

    /// The answer to the assertion: the client's redirect URI with `code`, `state`, `iss`.
    public struct Completed: Codable, Hashable, Sendable {
        public var redirectURL: String

        public init(redirectURL: String) {
            self.redirectURL = redirectURL
        }
    }
}
