import Foundation
import LatchkeyProtocol

extension Identity {
    /// The identity as the admin API shows it (docs/PROTOCOL.md, "Admin API").
    var adminView: AdminAPI.Identity {
        AdminAPI.Identity(
            id: id, username: username, email: email, displayName: displayName, createdAt: AuditEvent.formatTime(createdAt),
            requireAttestation: requiredAttestation?.rawValue
        )
    }
}
