@testable import LatchkeyIdP

/// What migration 18 made (the fleet's tables): a test that rewinds a store to an older
/// schema drops them, so the migration can make them again.
enum FleetSchema {
    static let tables = [
        "posix_ids", "posix_accounts", "posix_groups", "posix_group_members", "host_labels", "host_access", "host_directory_version",
    ]

    static func drop(in transaction: any SQLTransaction) async throws {
        for table in tables {
            try await transaction.execute(SQLStatement(stringLiteral: "DROP TABLE \(table)"))
        }
    }
}
