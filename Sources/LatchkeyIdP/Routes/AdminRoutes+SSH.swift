import Foundation
import Hummingbird
import LatchkeyProtocol

/// The SSH CA's admin endpoint (docs/PROTOCOL.md section 12): the principals an identity
/// may have certified beyond its username.
extension AdminRoutes {
    @Sendable func setSSHPrincipals(_ request: Request, context: ProviderRequestContext) async throws -> AdminAPI.SSHPrincipals {
        let identityID = try context.parameters.require("identity")
        let asked = try await HTTPSupport.decode(AdminAPI.SSHPrincipals.self, from: request, expected: "a JSON object with principals")
        let grants = provider.sshPrincipals
        let identities = provider.identities
        return try await provider.context.database.transaction { transaction in
            guard let identity = try await identities.identity(identityID, in: transaction) else { throw ProviderError.notFound("no such identity") }
            try await grants.set(asked.principals, for: identity.id, in: transaction)
            return AdminAPI.SSHPrincipals(principals: try await grants.principals(of: identity, in: transaction))
        }
    }
}
