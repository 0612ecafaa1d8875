import Foundation
@testable import LatchkeyIdP
import LatchkeyProtocol
import LatchkeyTestSupport
import Logging
import Testing

/// The fleet at size: a 10,000-member group read in bounded pages, and IDs allocated by
/// two PostgreSQL instances at once, none twice (docs/PROTOCOL.md section 14).
@Suite("Provider: the fleet at size", .timeLimit(.minutes(10)))
struct FleetScaleTests {
    /// `count` identities with POSIX accounts (uids from 70000), all members of `ops`
    /// (gid 69999), which hosts labelled `web` may log in to; the host `web-1` has the label.
    static func seed(_ count: Int, in database: any ProviderDatabase) async throws {
        try await database.transaction { transaction in
            try await transaction.execute("""
                WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < \(Int64(count - 1)))
                INSERT INTO identities (id, username, username_key, username_skeleton, display_name, created_at)
                SELECT 'id-' || i, 'user' || i, 'user' || i, 'user' || i, 'User ' || i, 0 FROM n
                """)
            try await transaction.execute("""
                INSERT INTO posix_accounts (identity_id, uid, home, shell, gecos, changed_at)
                SELECT id, 70000 + CAST(substr(id, 4) AS BIGINT), '/home/' || username, '/bin/bash', NULL, 0 FROM identities WHERE id LIKE 'id-%'
                """)
            try await transaction.execute("INSERT INTO posix_groups (gid, name, created_at) VALUES (69999, 'ops', 0)")
            try await transaction.execute("INSERT INTO posix_group_members (gid, identity_id) SELECT 69999, identity_id FROM posix_accounts")
            try await transaction.execute("INSERT INTO host_access (label, gid, sudo) VALUES ('web', 69999, 1)")
            try await transaction.execute("INSERT INTO host_labels (client_id, label) VALUES ('web-1', 'web')")
            try await HostDirectoryVersion.bump(in: transaction)
        }
    }

    @Test("a 10,000-member group is read in pages of at most the limit, each page bounded, and the walk puts every account and member together once", arguments: TestStore.available)
    func largeGroup(engine: TestStore) async throws {
        try await engine.withProvider { provider in
            try await provider.context.prepare()
            try await Self.seed(10_000, in: provider.context.database)
            var cursor: HostDirectoryCursor?
            var accounts: [Int64] = []
            var members: [String] = []
            var pages = 0
            repeat {
                let from = cursor
                let page = try await provider.context.database.transaction { transaction in
                    let version = try await HostDirectoryVersion.current(in: transaction)
                    return try await HostDirectory.page(for: "web-1", version: version, from: from, limit: 1000, in: transaction)
                }
                let entries = page.accounts.count + page.groups.count + page.groups.reduce(0) { $0 + $1.members.count }
                #expect(entries <= 1000, "page \(pages): \(entries) entries")
                #expect(try JSONEncoder().encode(page).count < 200_000, "page \(pages) is bounded")
                accounts += page.accounts.map(\.uid)
                members += page.groups.flatMap(\.members)
                #expect(page.groups.allSatisfy { $0.name == "ops" && $0.gid == 69999 && $0.sudo })
                cursor = try page.next.map { try #require(HostDirectoryCursor($0)) }
                pages += 1
            } while cursor != nil && pages < 100
            #expect(accounts.count == 10_000 && Set(accounts).count == 10_000 && accounts == accounts.sorted())
            #expect(members.count == 10_000 && Set(members).count == 10_000)
            #expect(pages == 21, "10 pages of accounts, 11 of the group's header and members")
            // Another host sees none of it.
            let other = try await provider.context.database.transaction { transaction in
                try await HostDirectory.page(for: "db-1", version: try HostDirectoryVersion.current(in: transaction), from: nil, limit: 1000, in: transaction)
            }
            #expect(other.accounts.isEmpty && other.groups.isEmpty && other.next == nil)
        }
    }

    @Test("IDs survive a restart and its migrations: the same uids and gids, the ledger goes on past them", arguments: TestStore.available)
    func restart(engine: TestStore) async throws {
        try await engine.with { storage, key in
            var configuration = ProviderConfiguration(adminToken: "t")
            configuration.storage = storage
            configuration.storeKey = key
            configuration.logLevel = .critical
            var before: [String: Int64] = [:]
            try await Provider.closing(configuration) { provider in
                for name in ["ada", "grace"] {
                    _ = try await provider.administration.createIdentity(username: name, email: nil, displayName: nil)
                    before[name] = try await provider.posixAccounts.set(name, AdminAPI.POSIXAccountChange()).uid
                }
                before["ops"] = try await provider.posixGroups.create("ops").gid
                _ = try await provider.posixAccounts.unset("grace")
            }
            try await Provider.closing(configuration) { provider in
                try await Migrations.run(on: provider.context.database)
                #expect(try await provider.posixAccounts.set("ada", AdminAPI.POSIXAccountChange()).uid == before["ada"])
                #expect(try await provider.posixAccounts.set("grace", AdminAPI.POSIXAccountChange()).uid == before["grace"])
                let groups = try await provider.posixGroups.list(after: nil, limit: 10)
                #expect(groups.map(\.gid) == [before["ops"]].compactMap { $0 })
                let next = try await provider.posixGroups.create("dev").gid
                #expect(next > before.values.max() ?? 0)
            }
        }
    }

    @Test("accounts with the longest homes, shells and GECOS fields end a page early: every page of the largest limit stays under 1 MiB, the default most a client reads")
    func longFields() async throws {
        try await TestStore.sqlite.withProvider { provider in
            try await provider.context.prepare()
            try await Self.seed(3000, in: provider.context.database)
            let home = "/" + String(repeating: "h", count: 255)
            let gecos = String(repeating: "\u{00E9}", count: 128)
            try await provider.context.database.transaction { transaction in
                try await transaction.execute("UPDATE posix_accounts SET home = \(home), shell = \(home), gecos = \(gecos)")
            }
            var cursor: HostDirectoryCursor?
            var accounts = 0
            var pages = 0
            repeat {
                let from = cursor
                let page = try await provider.context.database.transaction { transaction in
                    try await HostDirectory.page(for: "web-1", version: try HostDirectoryVersion.current(in: transaction), from: from, limit: HostDirectoryPage.maximumLimit, in: transaction)
                }
                #expect(try JSONEncoder().encode(page).count < 1 << 20, "page \(pages)")
                accounts += page.accounts.count
                cursor = try page.next.map { try #require(HostDirectoryCursor($0)) }
                pages += 1
            } while cursor != nil && pages < 100
            #expect(accounts == 3000 && pages > 3)
        }
    }

    @Test(
        "1,000 identities and 100 groups created by two PostgreSQL instances at once get 1,100 distinct IDs",
        .requires(if: TestStore.postgresURL != nil, "LATCHKEY_TEST_POSTGRES_URL is not set")
    )
    func concurrentAllocation() async throws {
        try await TestStore.postgres.with { storage, key in
            var configuration = ProviderConfiguration(adminToken: "t")
            configuration.storage = storage
            configuration.storeKey = key
            configuration.logLevel = .critical
            try await Provider.closing(configuration) { first in
                try await Provider.closing(configuration) { second in
                    try await first.context.prepare()
                    try await second.context.prepare()
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for (instance, provider) in [first, second].enumerated() {
                            for worker in 0..<6 {
                                group.addTask {
                                    var index = worker
                                    while index < 550 {
                                        if index < 500 {
                                            let name = "u\(instance)-\(index)"
                                            _ = try await provider.administration.createIdentity(username: name, email: nil, displayName: nil)
                                            _ = try await provider.posixAccounts.set(name, AdminAPI.POSIXAccountChange())
                                        } else {
                                            _ = try await provider.posixGroups.create("g\(instance)-\(index)")
                                        }
                                        index += 6
                                    }
                                }
                            }
                        }
                        try await group.waitForAll()
                    }
                    let (uids, gids, ledger) = try await first.context.database.transaction { transaction in
                        (
                            try await transaction.query("SELECT uid FROM posix_accounts").map { try $0.decode("uid", as: Int64.self) },
                            try await transaction.query("SELECT gid FROM posix_groups").map { try $0.decode("gid", as: Int64.self) },
                            try await transaction.query("SELECT id FROM posix_ids").map { try $0.decode("id", as: Int64.self) }
                        )
                    }
                    #expect(uids.count == 1000 && gids.count == 100)
                    #expect(Set(uids + gids).count == 1100, "no ID handed out twice")
                    #expect(Set(ledger) == Set(uids + gids) && ledger.count == 1100)
                    #expect((uids + gids).allSatisfy { (65536...99999).contains($0) })
                }
            }
        }
    }
}
