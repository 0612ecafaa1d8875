import Foundation

/// A user of the provider: a name that signs in, where codes go, what apps are told.
struct Identity: Sendable {
    var id: String
    var username: String
    var email: String?
    var displayName: String
    var createdAt: Date
    /// The attestation every credential registered for this identity must carry, on top of
    /// the provider's own policy (migration 8).
    var requiredAttestation: AttestationRequirement?

    /// The columns ``init(row:)`` reads, in order.
    static let columns = "id, username, email, display_name, created_at, require_attestation"

    init(id: String, username: String, email: String?, displayName: String, createdAt: Date, requiredAttestation: AttestationRequirement? = nil) {
        self.id = id
        self.username = username
        self.email = email
        self.displayName = displayName
        self.createdAt = createdAt
        self.requiredAttestation = requiredAttestation
    }

    init(row: SQLRow) throws {
        id = try row.decode("id", as: String.self)
        username = try row.decode("username", as: String.self)
        email = try row.decode("email", as: String?.self)
        displayName = try row.decode("display_name", as: String.self)
        createdAt = try row.decode("created_at", as: Date.self)
        if let required = try row.decode("require_attestation", as: String?.self) {
            guard let requirement = AttestationRequirement(rawValue: required) else {
                throw StoreError.corruptRow("an identity demands an unknown attestation")
            }
            requiredAttestation = requirement
        }
    }
}
