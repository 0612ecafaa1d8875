import Foundation

/// Remakes stored username skeletons when the rule that makes them changed
/// (``Username/skeletonRule``: a new confusables table, say), so a look-alike of a name
/// registered under the old rule is still refused. Runs at start, after the migrations,
/// in one transaction that instances take in turn, as migrations are, and only when the rule
/// recorded in `provider_settings` differs.
///
/// Two existing names may be look-alikes under the new rule. Neither is lost or renamed:
/// the older keeps the skeleton, the newer gets it with its id appended (so the column
/// stays unique), and a new name like either is refused as before.
enum SkeletonRefresh {
    static let setting = "username-skeleton-rule"

    static func run(on database: any ProviderDatabase, rule: String = Username.skeletonRule) async throws {
        try await database.exclusiveTransaction(lock: Migrations.lockKey) { transaction in
            let recorded = try await transaction.first("SELECT value FROM provider_settings WHERE name = \(setting)")?.decode("value", as: String.self)
            guard recorded != rule else { return }
            let identities = try await transaction.query("SELECT id, username FROM identities ORDER BY created_at, id").map {
                (id: try $0.decode("id", as: String.self), username: try $0.decode("username", as: String.self))
            }
            // First out of the way (U+0001 never occurs in a name's skeleton), then in
            // creation order, so no interim value collides with one not yet remade.
            try await transaction.execute("UPDATE identities SET username_skeleton = \("\u{1}") || id")
            var taken = Set<String>()
            for identity in identities {
                var skeleton = Username.skeleton(identity.username)
                if !taken.insert(skeleton).inserted { skeleton += "\u{1}" + identity.id }
                try await transaction.execute("UPDATE identities SET username_skeleton = \(skeleton) WHERE id = \(identity.id)")
            }
            try await transaction.execute("""
                INSERT INTO provider_settings (name, value) VALUES (\(setting), \(rule))
                ON CONFLICT (name) DO UPDATE SET value = excluded.value
                """)
        }
    }
}
