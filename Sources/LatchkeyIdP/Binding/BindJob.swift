import Foundation

/// A bind job: a one-time capability to register a credential for an identity
/// (docs/PROTOCOL.md section 2), reached by its id and a token of which only the hash is
/// kept.
struct BindJob: Sendable {
    enum Kind: String, Sendable {
        case bind
        /// Binding replaces (revokes) the identity's existing credentials.
        case recovery
    }

    var id: String
    var tokenHash: Data
    var identityID: String
    var kind: Kind
    var expiresAt: Date
    var postBindingRedirectURI: String?
    var challenge: Data?
    var used: Bool
    /// The hash of the e-mailed code, when the policy asks for one.
    var emailCodeHash: Data?
    var codeVerified: Bool
    var failedCodeAttempts: Int
    var termsAccepted: Bool
    /// This job asks for an e-mailed code first, whatever the provider-wide policy.
    var requireEmailCode: Bool

    static let columns = """
        id, token_hash, identity_id, kind, expires_at, post_binding_redirect_uri, challenge, used, email_code_hash, \
        code_verified, failed_code_attempts, terms_accepted, require_email_code
        """

    init(row: SQLRow) throws {
        id = try row.decode("id", as: String.self)
        tokenHash = try row.decode("token_hash", as: Data.self)
        identityID = try row.decode("identity_id", as: String.self)
        guard let kind = Kind(rawValue: try row.decode("kind", as: String.self)) else { throw StoreError.corruptRow("a bind job has an unknown kind") }
        self.kind = kind
        expiresAt = try row.decode("expires_at", as: Date.self)
        postBindingRedirectURI = try row.decode("post_binding_redirect_uri", as: String?.self)
        challenge = try row.decode("challenge", as: Data?.self)
        used = try row.decode("used", as: Bool.self)
        emailCodeHash = try row.decode("email_code_hash", as: Data?.self)
        codeVerified = try row.decode("code_verified", as: Bool.self)
        failedCodeAttempts = try row.decode("failed_code_attempts", as: Int.self)
        termsAccepted = try row.decode("terms_accepted", as: Bool.self)
        requireEmailCode = try row.decode("require_email_code", as: Bool.self)
    }
}
