import Foundation
import LatchkeyProtocol

/// A self-service sign-up or an account recovery in progress (docs/PROTOCOL.md section 6):
/// a code sent to an e-mail address, then a bind job. A recovery for a username that does
/// not exist is a decoy with the same shape, so the answers never tell the two apart.
struct Enrollment: Sendable {
    enum Kind: String, Sendable {
        case signUp = "signup"
        case recovery
    }

    var id: String
    var kind: Kind
    var tokenHash: Data
    var username: String
    /// Recovery: the identity, or nil for a decoy.
    var identityID: String?
    /// Sign-up: the profile once given, and whether the username was taken (then no code
    /// is ever sent, and every code is wrong).
    var profile: [String: String]?
    var usernameTaken = false
    var failedAttempts = 0
    var expiresAt: Date

    init(id: String, kind: Kind, tokenHash: Data, username: String, expiresAt: Date) {
        self.id = id
        self.kind = kind
        self.tokenHash = tokenHash
        self.username = username
        self.expiresAt = expiresAt
    }

    static let columns = """
        id, kind, token_hash, username, identity_id, profile, username_taken, failed_attempts, expires_at
        """

    init(row: SQLRow) throws {
        id = try row.decode("id", as: String.self)
        guard let kind = Kind(rawValue: try row.decode("kind", as: String.self)) else { throw StoreError.corruptRow("an enrollment has an unknown kind") }
        self.kind = kind
        tokenHash = try row.decode("token_hash", as: Data.self)
        username = try row.decode("username", as: String.self)
        identityID = try row.decode("identity_id", as: String?.self)
        if let profile = try row.decode("profile", as: String?.self) {
            guard let decoded = try? JSONDecoder().decode([String: String].self, from: Data(profile.utf8)) else {
                throw StoreError.corruptRow("an enrollment's profile does not parse")
            }
            self.profile = decoded
        }
        usernameTaken = try row.decode("username_taken", as: Bool.self)
        failedAttempts = try row.decode("failed_attempts", as: Int.self)
        expiresAt = try row.decode("expires_at", as: Date.self)
    }

    /// Whose code the flow checks (``MailedCode``): the account named, for a recovery
    /// (the same for a name that does not exist, whose target simply has no code); the
    /// e-mail address, for a sign-up once its profile is given.
    var codeTarget: String? {
        switch kind {
        case .recovery:
            return "recovery|" + Username.key(username)
        case .signUp:
            return profile?[Step.Field.Name.email.rawValue].map { "signup|" + $0.lowercased() }
        }
    }

    func save(in transaction: any SQLTransaction) async throws {
        let profileColumn = try profile.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        try await transaction.execute("""
            INSERT INTO enrollments (\(raw: Self.columns))
            VALUES (\(id), \(kind.rawValue), \(tokenHash), \(username), \(identityID), \(profileColumn), \(usernameTaken),
                \(failedAttempts), \(expiresAt))
            ON CONFLICT (id) DO UPDATE SET identity_id = excluded.identity_id, profile = excluded.profile,
                username_taken = excluded.username_taken, failed_attempts = excluded.failed_attempts
            """)
    }
}
