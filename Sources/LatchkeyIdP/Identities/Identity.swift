import Foundation

/// A user of the provider: a name that signs in, where codes go, what apps are told.
struct Identity: Sendable {
    var id: String
    var username: String
    var email: String?
    var displayName: String
    var createdAt: Date

    /// The columns ``init(row:)`` reads, in order.
    static let columns = "id, username, email, display_name, created_at"

    init(id: String, username: String, email: String?, displayName: String, createdAt: Date) {
        self.id = id
        self.username = username
        self.email = email
        self.displayName = displayName
        self.createdAt = createdAt
    }

    init(row: SQLRow) throws {
        id = try row.decode("id", as: String.self)
        username = try row.decode("username", as: String.self)
        email = try row.decode("email", as: String?.self)
        displayName = try row.decode("display_name", as: String.self)
        createdAt = try row.decode("created_at", as: Date.self)
    }
}
