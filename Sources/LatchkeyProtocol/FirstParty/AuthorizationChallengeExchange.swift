#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import LatchkeyCrypto
public import LatchkeyWebAuthn

/// The answers of the authorization challenge endpoint (draft-ietf-oauth-first-party-apps-04
/// §5.2) in Latchkey's WebAuthn profile (docs/PROTOCOL.md section 8).
public enum AuthorizationChallengeExchange {
    /// `403 insufficient_authorization` (§5.2.2.1): sign these request options (WebAuthn
    /// L3 §5.5) and send the assertion back with this `auth_session`.
    public struct InsufficientAuthorization: Codable, Hashable, Sendable {
        public var error: String
        public var errorDescription: String?
        public var authSession: String
        public var webauthn: PublicKeyCredentialRequestOptionsJSON

        enum CodingKeys: String, CodingKey {
            case error
            case errorDescription = "error_description"
            case authSession = "auth_session"
            case webauthn
        }

        public init(authSession: String, webauthn: PublicKeyCredentialRequestOptionsJSON) {
            error = "insufficient_authorization"
            errorDescription = "sign the WebAuthn challenge with a passkey and send it as webauthn_response with this auth_session"
            self.authSession = authSession
            self.webauthn = webauthn
        }

        /// What `JSONEncoder` with sorted keys writes, written directly
        /// (``JSONObjectWriter``): the provider sends it on every sign-in.
        public var encodedJSON: Data {
            var writer = JSONObjectWriter(capacity: 512 + authSession.utf8.count)
            writer.string(CodingKeys.authSession.rawValue, authSession)
            writer.string(CodingKeys.error.rawValue, error)
            writer.string(CodingKeys.errorDescription.rawValue, ifPresent: errorDescription)
            writer.json(CodingKeys.webauthn.rawValue, webauthn.encodedJSON)
            return writer.finished()
        }
    }

    /// `200` (§5.2.1): the authorization code, redeemed at `/token` with the PKCE verifier
    /// and no `redirect_uri` (§6).
    public struct AuthorizationCode: Codable, Hashable, Sendable {
        public var authorizationCode: String

        enum CodingKeys: String, CodingKey {
            case authorizationCode = "authorization_code"
        }

        public init(authorizationCode: String) {
            self.authorizationCode = authorizationCode
        }

        /// What `JSONEncoder` writes, written directly (``JSONObjectWriter``).
        public var encodedJSON: Data {
            var writer = JSONObjectWriter(capacity: 64 + authorizationCode.utf8.count)
            writer.string(CodingKeys.authorizationCode.rawValue, authorizationCode)
            return writer.finished()
        }
    }
}
