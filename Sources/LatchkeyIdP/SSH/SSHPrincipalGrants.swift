import Foundation
import LatchkeyCrypto
import LatchkeyOAuth

/// Who may log in as whom (docs/PROTOCOL.md section 12): an identity's certificates name
/// its username and the principals an admin granted it (`latchkey admin
/// set-ssh-principals`), nothing else. A username OpenSSH could misread in a list (a
/// comma, a space, a control character) is never a principal.
struct SSHPrincipalGrants: Sendable {
    /// The most principals an identity may be granted.
    static let maximumPerIdentity = 64

    /// The principals `identity` may have certified: its username first, then the granted
    /// ones, sorted.
    func principals(of identity: Identity, in transaction: any SQLTransaction) async throws -> [String] {
        let rows = try await transaction.query("SELECT principal FROM ssh_principals WHERE identity_id = \(identity.id) ORDER BY principal")
        var principals = SSHCertificate.isAcceptablePrincipal(identity.username) ? [identity.username] : []
        for row in rows {
            let principal = try row.decode("principal", as: String.self)
            if !principals.contains(principal) { principals.append(principal) }
        }
        return principals
    }

    /// Replaces the principals granted to `identityID` beyond its username.
    func set(_ principals: [String], for identityID: String, in transaction: any SQLTransaction) async throws {
        guard principals.count <= Self.maximumPerIdentity, principals.allSatisfy(SSHCertificate.isAcceptablePrincipal) else {
            throw ProviderError.badRequest(.invalidRequest, "principals: at most \(Self.maximumPerIdentity) names without commas, spaces or control characters")
        }
        try await transaction.execute("DELETE FROM ssh_principals WHERE identity_id = \(identityID)")
        for principal in Set(principals).sorted() {
            try await transaction.execute("INSERT INTO ssh_principals (identity_id, principal) VALUES (\(identityID), \(principal))")
        }
    }
}
