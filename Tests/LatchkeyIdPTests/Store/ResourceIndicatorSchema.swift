@testable import LatchkeyIdP

/// What migration steps 19 to 22 added (resource indicators, RFC 8707; JWT access
/// tokens, RFC 9068; consents; dynamic registration), for tests that rebuild an older
/// store's schema.
enum ResourceIndicatorSchema {
    static func drop(in transaction: any SQLTransaction) async throws {
        for statement in [
            "ALTER TABLE clients DROP COLUMN third_party", "ALTER TABLE clients DROP COLUMN registration_token_hash",
            "ALTER TABLE clients DROP COLUMN application_type", "DROP TABLE consents", "ALTER TABLE resource_servers DROP COLUMN access_token_format",
            "DROP INDEX resource_servers_resource", "ALTER TABLE resource_servers DROP COLUMN resource",
            "ALTER TABLE grant_families DROP COLUMN resource", "ALTER TABLE client_tokens DROP COLUMN resource",
            "ALTER TABLE device_codes DROP COLUMN resource", "ALTER TABLE clients DROP COLUMN resources",
        ] {
            try await transaction.execute(SQLStatement(stringLiteral: statement))
        }
    }
}
