import Foundation

/// What an authorization code issued on PostgreSQL carries, sealed (``TicketSealer``): the
/// code *is* the sealed ticket, so its redemption can be one statement that commits by
/// itself (``GrantLedger/redeemInOneStatement(_:ticket:client:redirectURI:codeChallenge:now:in:)``,
/// docs/PERFORMANCE.md "PostgreSQL").
///
/// Why a code carries anything: the redemption's `token.issued` audit event names the
/// identity and the scope, and its authentication code (``AuditLog``) is computed before
/// the statement runs. Without them in the code, the store had to be read first, a round
/// trip of its own. The row stays the authority: the statement spends the code only when
/// the row's family has this identity and scope, so what the ticket says is never
/// believed alone, and a code that does not open (another layout, a ticket secret that
/// changed) is redeemed by the transaction, as before.
///
/// A code's strength does not rest on the seal either: only its SHA-256 is stored, and a
/// ticket's 128-bit salt and 96-bit GCM nonce are fresh from the CSPRNG, so a code is as
/// hard to guess as a random token (RFC 6749 §10.10). The seal keeps the identity out of
/// the redirect URL, its logs and its `Referer`.
struct CodeTicket: Sendable, Equatable {
    var identityID: String
    var scope: String

    /// The ticket purpose, so a code opens as nothing else.
    static let purpose = "authorization code 1"
}

extension CodeTicket: TicketLayout {
    func write(to writer: inout TicketWriter) {
        writer.text(identityID)
        writer.text(scope)
    }

    init?(reading reader: inout TicketReader) {
        guard let identityID = reader.text(), let scope = reader.text() else { return nil }
        self.init(identityID: identityID, scope: scope)
    }
}
