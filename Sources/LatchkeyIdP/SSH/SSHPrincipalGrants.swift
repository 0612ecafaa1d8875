import Foundation
import LatchkeyCrypto
import LatchkeyOAuth

/// Who may log in as whom (docs/PROTOCOL.md section 12): an identity's certificates name
/// its username and the principals an admin granted it (`latchkey admin
/// set-ssh-principals`), nothing else; a client's name only the principals an admin
/// granted it (`--client`), none by default. A username OpenSSH could misread in a list
/// (a comma, a space, a control character) is never a principal.
struct SSHPrincipalGrants: Sendable {
    /// Names a username never becomes a principal as (``ReservedUsernames``): an identity
    /// called `root`, from before the name was reserved, gets `root` only if granted it.
    let reserved: ReservedUsernames

    /// The most principals an identity or a client may be granted.
    static let maximumPerIdentity = 64

    /// The principals `holder` may have certified.
    func principals(of holder: SSHCertificateHolder, in transaction: any SQLTransaction) async throws -> [String] {
        switch holder {
        case .identity(let identity, _): try await principals(of: identity, in: transaction)
        case .client(let id, _): try await principals(ofClient: id, in: transaction)
        }
    }

    /// The principals `identity` may have certified: its username first, unless reserved,
    /// then the granted ones, sorted.
    func principals(of identity: Identity, in transaction: any SQLTransaction) async throws -> [String] {
        let rows = try await transaction.query("SELECT principal FROM ssh_principals WHERE identity_id = \(identity.id) ORDER BY principal")
        let own = SSHCertificate.isAcceptablePrincipal(identity.username) && !reserved.contains(identity.username)
        var principals = own ? [identity.username] : []
        for row in rows {
            let principal = try row.decode("principal", as: String.self)
            if !principals.contains(principal) { principals.append(principal) }
        }
        return principals
    }

    /// The principals granted to the client `clientID`, sorted: a client has no username.
    func principals(ofClient clientID: String, in transaction: any SQLTransaction) async throws -> [String] {
        let rows = try await transaction.query("SELECT principal FROM ssh_client_principals WHERE client_id = \(clientID) ORDER BY principal")
        return try rows.map { try $0.decode("principal", as: String.self) }
    }

    /// Replaces the principals granted to `identityID` beyond its username.
    func set(_ principals: [String], for identityID: String, in transaction: any SQLTransaction) async throws {
        try Self.check(principals)
        try await transaction.execute("DELETE FROM ssh_principals WHERE identity_id = \(identityID)")
        for principal in Set(principals).sorted() {
            try await transaction.execute("INSERT INTO ssh_principals (identity_id, principal) VALUES (\(identityID), \(principal))")
        }
    }

    /// Replaces the principals granted to the client `clientID`.
    func set(_ principals: [String], forClient clientID: String, in transaction: any SQLTransaction) async throws {
        try Self.check(principals)
        try await transaction.execute("DELETE FROM ssh_client_principals WHERE client_id = \(clientID)")
        for principal in Set(principals).sorted() {
            try await transaction.execute("INSERT INTO ssh_client_principals (client_id, principal) VALUES (\(clientID), \(principal))")
        }
    }

    private static func check(_ principals: [String]) throws {
        guard principals.count <= maximumPerIdentity, principals.allSatisfy(SSHCertificate.isAcceptablePrincipal) else {
            throw ProviderError.badRequest(.invalidRequest, "principals: at most \(maximumPerIdentity) names without commas, spaces or control characters")
        }
    }
}
