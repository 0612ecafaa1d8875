import Foundation

/// A self-service sign-up or an account recovery in progress (docs/PROTOCOL.md section 6):
/// a code sent to an e-mail address, then a bind job. A recovery for a username that does
/// not exist is a decoy with the same shape, so the answers never tell the two apart.
struct Enrollment: Sendable {
    enum Kind: String, Sendable {
        case signUp = "signup"
        case recovery
    }

    var id: String
    var kind: Kind
    var tokenHash: Data
    var username: String
    /// Recovery: the identity, or nil for a decoy.
    var identityID: String?
    /// Sign-up: the profile once given, and whether the username was taken (then no code
    /// is ever sent, and every code is wrong).
    var profile: [String: String]?
    var usernameTaken = false
    var codeHash: Data?
    var codeExpiresAt: Date = .distantPast
    var failedAttempts = 0
    var expiresAt: Date
}
