import Foundation

/// A sign-in in progress: an authorization request (RFC 6749 §4.1.1) waiting for an
/// assertion. It is not stored: it travels sealed (``TicketSealer``) in the authenticate
/// URL, so an `/authorize` creates nothing in the store, and only its ``id`` is recorded,
/// in `spent_tickets`, when an assertion completes it (docs/SECURITY.md, "Limits").
struct SignInSession: Codable, Sendable {
    /// Random; recorded when the session is spent, so it completes once.
    var id: String
    var clientID: String
    /// The client's ``RegisteredClient/registration`` when the session began: the grant
    /// it yields is that registration's, not a later client's under the same id.
    var clientRegistration: String?
    var redirectURI: String
    var state: String?
    var nonce: String?
    var codeChallenge: String
    /// The `dpop_jkt` of the request (RFC 9449 §10): the code is then redeemed only with a
    /// proof of that key.
    var dpopJKT: String?
    var scope: String
    /// The WebAuthn challenge (§13.4.3: random, at least 16 bytes, used once).
    var challenge: Data
    var allowedCredentials: [Data]
    var expiresAt: Date

    /// The ticket purpose, so a sign-in ticket opens as nothing else.
    static let purpose = "sign-in session"
}
