/// The version of everything hosts are told (docs/PROTOCOL.md section 14): bumped in the
/// transaction of every change to POSIX accounts, groups, members, host labels or host
/// access, and by a rename or deletion of an identity with an account. A host that asks
/// again with the version it has (`If-None-Match`) costs one row read: a 304.
enum HostDirectoryVersion {
    static func bump(in transaction: any SQLTransaction) async throws {
        try await transaction.execute("UPDATE host_directory_version SET version = version + 1")
    }

    static func current(in transaction: any SQLTransaction) async throws -> Int64 {
        guard let row = try await transaction.first("SELECT version FROM host_directory_version") else {
            throw StoreError.corruptRow("host_directory_version has no row")
        }
        return try row.decode("version", as: Int64.self)
    }
}
