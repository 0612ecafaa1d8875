import Foundation

/// A sign-in in progress: an authorization request (RFC 6749 §4.1.1) waiting for an
/// assertion. It is not stored: it travels sealed (``TicketSealer``) in the authenticate
/// URL, so an `/authorize` creates nothing in the store, and only its ``id`` is recorded,
/// in `spent_tickets`, when an assertion completes it (docs/SECURITY.md, "Limits").
struct SignInSession: Sendable {
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
    /// The resource the tokens are for (RFC 8707, canonical), checked when the session began.
    var resource: String?
    /// A third-party client's sign-in: the person consents (``Consents``) before a code.
    var thirdParty = false
    /// The WebAuthn challenge (§13.4.3: random, at least 16 bytes, used once).
    var challenge: Data
    var allowedCredentials: [Data]
    var expiresAt: Date

    /// The ticket purpose, so a sign-in ticket opens as nothing else; "2" was the binary
    /// layout (``TicketLayout``), which replaced JSON; "3" added the resource, "4" consent.
    static let purpose = "sign-in session 4"
}

extension SignInSession: TicketLayout {
    func write(to writer: inout TicketWriter) {
        writer.text(id)
        writer.text(clientID)
        writer.text(ifPresent: clientRegistration)
        writer.text(redirectURI)
        writer.text(ifPresent: state)
        writer.text(ifPresent: nonce)
        writer.text(codeChallenge)
        writer.text(ifPresent: dpopJKT)
        writer.text(scope)
        writer.text(ifPresent: resource)
        writer.text(ifPresent: thirdParty ? "third-party" : nil)
        writer.data(challenge)
        writer.dataList(allowedCredentials)
        writer.date(expiresAt)
    }

    init?(reading reader: inout TicketReader) {
        guard let id = reader.text(), let clientID = reader.text(), let clientRegistration = reader.optionalText(),
              let redirectURI = reader.text(), let state = reader.optionalText(), let nonce = reader.optionalText(),
              let codeChallenge = reader.text(), let dpopJKT = reader.optionalText(), let scope = reader.text(),
              let resource = reader.optionalText(), let thirdParty = reader.optionalText(), let challenge = reader.data(), let allowedCredentials = reader.dataList(), let expiresAt = reader.date()
        else { return nil }
        self.init(
            id: id, clientID: clientID, clientRegistration: clientRegistration, redirectURI: redirectURI, state: state, nonce: nonce,
            codeChallenge: codeChallenge, dpopJKT: dpopJKT, scope: scope, resource: resource, thirdParty: thirdParty != nil, challenge: challenge, allowedCredentials: allowedCredentials, expiresAt: expiresAt
        )
    }
}
