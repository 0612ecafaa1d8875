import Foundation
import Hummingbird
import LatchkeyProtocol

/// The SSH CA's admin endpoints (docs/PROTOCOL.md section 12): the principals an identity
/// may have certified beyond its username, and host certificates.
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

    @Sendable func createSSHHostCertificate(_ request: Request, context: ProviderRequestContext) async throws -> AdminAPI.SSHHostCertificate {
        let asked = try await HTTPSupport.decode(AdminAPI.SSHHostCertificateRequest.self, from: request, expected: "a JSON object with publicKey and hosts")
        return try await SSHHostCertificates(context: provider.context).issue(asked)
    }
}
