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
        id = try row.text(0)
        tokenHash = try row.blob(1)
        identityID = try row.text(2)
        guard let kind = Kind(rawValue: try row.text(3)) else { throw StoreError.corruptRow("a bind job has an unknown kind") }
        self.kind = kind
        expiresAt = try row.date(4)
        postBindingRedirectURI = try row.optionalText(5)
        challenge = try row.optionalBlob(6)
        used = try row.bool(7)
        emailCodeHash = try row.optionalBlob(8)
        codeVerified = try row.bool(9)
        failedCodeAttempts = Int(try row.int(10))
        termsAccepted = try row.bool(11)
        requireEmailCode = try row.bool(12)
    }
}
