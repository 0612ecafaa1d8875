import Foundation

/// A sign-in whose passkey verified, waiting for the person's consent to a third-party
/// client (``Consents``): everything the authorization code will be issued for, sealed
/// (``TicketSealer``) so the page can hold it but not read or change it, bound to the
/// sign-in session it came from, single use (its ``id`` goes to `spent_tickets` with the
/// decision), and short-lived.
struct ConsentTicket: Sendable {
    var id: String
    /// SHA-256 of the sign-in session's ticket: the decision must come for that session.
    var sessionBinding: Data
    var identityID: String
    var credentialID: Data
    var clientID: String
    var scope: String
    var resource: String?
    var redirectURI: String
    var state: String?
    var nonce: String?
    var codeChallenge: String
    var dpopJKT: String?
    var expiresAt: Date

    static let purpose = "consent 1"
    /// Long enough to read the prompt; the passkey was used already.
    static let lifetime: TimeInterval = 300
}

extension ConsentTicket: TicketLayout {
    func write(to writer: inout TicketWriter) {
        writer.text(id)
        writer.data(sessionBinding)
        writer.text(identityID)
        writer.data(credentialID)
        writer.text(clientID)
        writer.text(scope)
        writer.text(ifPresent: resource)
        writer.text(redirectURI)
        writer.text(ifPresent: state)
        writer.text(ifPresent: nonce)
        writer.text(codeChallenge)
        writer.text(ifPresent: dpopJKT)
        writer.date(expiresAt)
    }

    init?(reading reader: inout TicketReader) {
        guard let id = reader.text(), let sessionBinding = reader.data(), let identityID = reader.text(), let credentialID = reader.data(),
              let clientID = reader.text(), let scope = reader.text(), let resource = reader.optionalText(), let redirectURI = reader.text(),
              let state = reader.optionalText(), let nonce = reader.optionalText(), let codeChallenge = reader.text(),
              let dpopJKT = reader.optionalText(), let expiresAt = reader.date()
        else { return nil }
        self.init(
            id: id, sessionBinding: sessionBinding, identityID: identityID, credentialID: credentialID, clientID: clientID, scope: scope,
            resource: resource, redirectURI: redirectURI, state: state, nonce: nonce, codeChallenge: codeChallenge, dpopJKT: dpopJKT,
            expiresAt: expiresAt
        )
    }
}
