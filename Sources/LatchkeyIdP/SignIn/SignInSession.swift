import Foundation
import LatchkeyCrypto

/// A sign-in in progress: an authorization request (RFC 6749 §4.1.1) waiting for an
/// assertion. Its id is a capability carried in the authenticate URL; only its hash is
/// stored.
struct SignInSession: Sendable {
    var clientID: String
    var redirectURI: String
    var state: String?
    var nonce: String?
    var codeChallenge: String
    var scope: String
    var challenge: Data
    var allowedCredentials: [Data]
    var expiresAt: Date

    static let columns = "client_id, redirect_uri, state, nonce, code_challenge, scope, challenge, allowed_credentials, expires_at"

    init(clientID: String, redirectURI: String, state: String?, nonce: String?, codeChallenge: String, scope: String, challenge: Data, allowedCredentials: [Data], expiresAt: Date) {
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.state = state
        self.nonce = nonce
        self.codeChallenge = codeChallenge
        self.scope = scope
        self.challenge = challenge
        self.allowedCredentials = allowedCredentials
        self.expiresAt = expiresAt
    }

    init(row: SQLRow) throws {
        clientID = try row.text(0)
        redirectURI = try row.text(1)
        state = try row.optionalText(2)
        nonce = try row.optionalText(3)
        codeChallenge = try row.text(4)
        scope = try row.text(5)
        challenge = try row.blob(6)
        let allowed = try row.text(7)
        allowedCredentials = try allowed.split(separator: ",").map { piece in
            guard let id = try? Base64URL.decode(String(piece)) else { throw StoreError(.corruptRow, "a sign-in session's credential list does not parse") }
            return id
        }
        expiresAt = try row.date(8)
    }

    /// The allowed credentials as stored: base64url, comma-separated.
    var allowedColumn: String { allowedCredentials.map(Base64URL.encode).joined(separator: ",") }
}
