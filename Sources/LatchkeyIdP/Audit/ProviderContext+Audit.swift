import Foundation
import LatchkeyCrypto

extension ProviderContext {
    /// The checker of this provider's audit log, with its keys.
    func auditVerifier() async throws -> AuditVerifier {
        AuditVerifier(database: database, audit: audit, key: try await auditSigningKey().publicKey)
    }
}
