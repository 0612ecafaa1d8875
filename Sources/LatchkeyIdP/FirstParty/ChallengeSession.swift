import Foundation

/// An authorization challenge in progress (draft-ietf-oauth-first-party-apps-04 §5.3.1's
/// `auth_session`): the authorization request, the WebAuthn challenge it was given, and
/// the DPoP key it is bound to when its first request carried a proof (§9.6.1). Like a
/// sign-in session it is not stored: it travels sealed (``TicketSealer``, so the client
/// cannot read or change it, §5.3.1), and only its ``id`` is recorded, in `spent_tickets`,
/// when an assertion completes it, so it yields one code.
struct ChallengeSession: Sendable {
    var id: String
    var clientID: String
    /// The client's ``RegisteredClient/registration`` when the session began.
    var clientRegistration: String?
    var scope: String
    /// The resource the tokens are for (RFC 8707, canonical), if any.
    var resource: String?
    var codeChallenge: String
    /// The thumbprint of the first request's DPoP key (RFC 7638), if it had a proof.
    var dpopJKT: String?
    /// The WebAuthn challenge (§13.4.3: random, at least 16 bytes, used once).
    var challenge: Data
    var allowedCredentials: [Data]
    var expiresAt: Date

    /// "2" was the binary layout (``TicketLayout``), which replaced JSON; "3" added the resource.
    static let purpose = "authorization challenge session 3"
}

extension ChallengeSession: TicketLayout {
    func write(to writer: inout TicketWriter) {
        writer.text(id)
        writer.text(clientID)
        writer.text(ifPresent: clientRegistration)
        writer.text(scope)
        writer.text(ifPresent: resource)
        writer.text(codeChallenge)
        writer.text(ifPresent: dpopJKT)
        writer.data(challenge)
        writer.dataList(allowedCredentials)
        writer.date(expiresAt)
    }

    init?(reading reader: inout TicketReader) {
        guard let id = reader.text(), let clientID = reader.text(), let clientRegistration = reader.optionalText(),
              let scope = reader.text(), let resource = reader.optionalText(), let codeChallenge = reader.text(), let dpopJKT = reader.optionalText(),
              let challenge = reader.data(), let allowedCredentials = reader.dataList(), let expiresAt = reader.date()
        else { return nil }
        self.init(
            id: id, clientID: clientID, clientRegistration: clientRegistration, scope: scope, resource: resource, codeChallenge: codeChallenge,
            dpopJKT: dpopJKT, challenge: challenge, allowedCredentials: allowedCredentials, expiresAt: expiresAt
        )
    }
}
