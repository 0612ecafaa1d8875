import Foundation
import LatchkeyCrypto
import LatchkeyProtocol

/// Whom a user certificate is issued to (docs/PROTOCOL.md section 12): a person, signed in
/// with a credential, or a client for itself with a client credentials token (RFC 6749
/// §4.4). Each has its own principals, its own keys, its own line in the key id and the
/// audit log, and its own way onto the KRL.
enum SSHCertificateHolder: Sendable {
    /// A person: the identity and the credential the token's sign-in was made with.
    case identity(Identity, credentialID: Data)
    /// A registered client; `registration` tells this client from one registered later
    /// under the same id (nil for a configured client).
    case client(id: String, registration: String?)

    /// The key id `sshd` logs: who, with what, and the serial.
    func keyID(serial: UInt64) -> String {
        switch self {
        case .identity(let identity, let credentialID):
            "latchkey identity=\(identity.id) credential=\(Base64URL.encode(credentialID).prefix(22)) serial=\(serial)"
        case .client(let id, _):
            "latchkey client=\(id) serial=\(serial)"
        }
    }

    /// The comment of the certificate's line: the username or client id when it is one
    /// word, as a principal is.
    var lineComment: String {
        let name = switch self {
        case .identity(let identity, _): identity.username
        case .client(let id, _): id
        }
        return SSHCertificate.isAcceptablePrincipal(name) ? name : "latchkey"
    }

    /// The audit event's actor and subject.
    var actor: AuditEvent.Actor {
        switch self {
        case .identity(let identity, _): .identity(identity.id)
        case .client(let id, _): .client(id)
        }
    }

    var identityID: String? {
        if case .identity(let identity, _) = self { return identity.id }
        return nil
    }

    var credentialID: Data? {
        if case .identity(_, let credentialID) = self { return credentialID }
        return nil
    }

    var clientRegistration: String? {
        if case .client(_, let registration) = self { return registration }
        return nil
    }
}
