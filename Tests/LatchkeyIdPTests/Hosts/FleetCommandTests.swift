import Foundation
@testable import LatchkeyIdP
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// The fleet through `latchkey admin`, each command with `--idp` and `--json`, as an
/// admin types them (docs/PROTOCOL.md section 14), and `serve --posix-uid-range` refused
/// at start over the host's own ranges.
@Suite("latchkey admin: accounts, groups and host access")
struct FleetCommandTests {
    static func admin(_ issuer: URL, _ arguments: [String]) async throws -> ChildProcess.Output {
        try await LatchkeyCommand.run(
            ["admin"] + arguments.prefix(1) + ["--idp", issuer.absoluteString, "--json"] + arguments.dropFirst(),
            environment: ["LATCHKEY_ADMIN_TOKEN": ProviderHarness.adminToken]
        )
    }

    static func json<Answer: Decodable>(_ type: Answer.Type, _ issuer: URL, _ arguments: [String]) async throws -> Answer {
        let run = try await admin(issuer, arguments)
        try #require(run.status == 0, "latchkey admin \(arguments.joined(separator: " ")): \(run.stderr)")
        return try JSONDecoder().decode(type, from: Data(run.stdout.utf8))
    }

    @Test("create users and groups, give them accounts, grant ops login and sudo on web hosts: the web host reads them, the db host none; rename keeps the uid; every refusal exits non-zero with the provider's reason")
    func commands() async throws {
        try await ProviderTests.withProvider(.sqlite) { issuer, _ in
            for name in ["ada", "grace", "bob"] {
                #expect(try await Self.admin(issuer, ["create-identity", "--username", name]).status == 0)
            }
            let ada = try await Self.json(AdminAPI.POSIXAccount.self, issuer, ["set-posix", "ada", "--shell", "/bin/zsh", "--gecos", "Ada Lovelace"])
            #expect(ada.shell == "/bin/zsh" && ada.gecos == "Ada Lovelace" && ada.home == "/home/ada" && ada.gid == ada.uid)
            let grace = try await Self.json(AdminAPI.POSIXAccount.self, issuer, ["set-posix", "grace"])
            _ = try await Self.json(AdminAPI.POSIXAccount.self, issuer, ["set-posix", "bob"])
            let ops = try await Self.json(AdminAPI.Group.self, issuer, ["create-group", "ops"])
            #expect(ops.name == "ops" && ops.members == 0 && ops.gid > grace.uid)
            _ = try await Self.json(AdminAPI.Group.self, issuer, ["create-group", "dba"])
            #expect(try await Self.json(AdminAPI.Group.self, issuer, ["add-member", "ops", "ada"]).members == 1)
            #expect(try await Self.json(AdminAPI.Group.self, issuer, ["add-member", "ops", "grace"]).members == 2)
            #expect(try await Self.json(AdminAPI.Group.self, issuer, ["add-member", "dba", "bob"]).members == 1)
            let web = try await HostDirectoryTests.host(issuer, "web-1", labels: [])
            let db = try await HostDirectoryTests.host(issuer, "db-1", labels: [])
            #expect(try await Self.json(AdminAPI.HostLabels.self, issuer, ["set-host-labels", "--client-id", "web-1", "web", "eu"]).labels == ["eu", "web"])
            #expect(try await Self.json(AdminAPI.HostLabels.self, issuer, ["set-host-labels", "--client-id", "db-1", "db"]).labels == ["db"])
            let granted = try await Self.json(AdminAPI.HostAccess.self, issuer, ["grant-host-access", "--label", "web", "--group", "ops", "--sudo"])
            #expect(granted == AdminAPI.HostAccess(label: "web", group: "ops", sudo: true))
            let groups = try await Self.json(AdminAPI.GroupPage.self, issuer, ["list-groups"]).groups
            #expect(groups.map(\.name) == ["dba", "ops"] && groups.last?.sudoLabels == ["web"] && groups.last?.members == 2)

            let webView = try await HostDirectoryTests.walk(issuer, token: web.token)
            #expect(webView.accounts.map(\.name) == ["ada", "grace"] && webView.groups["ops"]?.sudo == true && webView.groups.count == 1)
            #expect(try await HostDirectoryTests.walk(issuer, token: db.token).accounts.isEmpty, "db hosts were granted nothing")

            // A rename keeps the uid; hosts see the new name.
            let renamed = try await Self.json(AdminAPI.IdentityRenamed.self, issuer, ["rename", "ada", "ada-l"])
            #expect(renamed.uid == ada.uid && renamed.identity.username == "ada-l")
            #expect(try await HostDirectoryTests.walk(issuer, token: web.token).accounts.first { $0.uid == ada.uid }?.name == "ada-l")

            // Undo it all.
            #expect(try await Self.json(AdminAPI.Group.self, issuer, ["remove-member", "ops", "grace"]).members == 1)
            #expect(try await Self.json(AdminAPI.Deletion.self, issuer, ["revoke-host-access", "--label", "web", "--group", "ops"]).deleted)
            #expect(try await Self.json(AdminAPI.Deletion.self, issuer, ["unset-posix", "grace"]).deleted)
            #expect(try await Self.json(AdminAPI.Deletion.self, issuer, ["delete-group", "dba"]).deleted)
            #expect(try await HostDirectoryTests.walk(issuer, token: web.token).accounts.isEmpty)

            // Refusals: the provider's reason, and a non-zero exit.
            for (arguments, says) in [
                (["create-group", "Ops"], "not a POSIX name"), (["create-group", "sudo"], "reserved"), (["create-group", "ops"], "already"),
                (["rename", "grace", "ada-l"], "already exists"), (["set-posix", "nobody-here"], "no such identity"),
                (["set-host-labels", "--client-id", "nope", "web"], "no such registered client"),
                (["grant-host-access", "--label", "Web", "--group", "ops"], "host label"),
            ] {
                let run = try await Self.admin(issuer, arguments)
                #expect(run.status != 0 && run.stderr.contains(says), "\(arguments): \(run.stderr)")
            }
            // Plain text, without --json.
            let text = try await LatchkeyCommand.run(
                ["admin", "set-posix", "--idp", issuer.absoluteString, "bob"], environment: ["LATCHKEY_ADMIN_TOKEN": ProviderHarness.adminToken]
            )
            #expect(text.status == 0 && text.stdout.hasPrefix("bob: uid "))
        }
    }

    @Test("serve refuses a POSIX ID range over the host's own at start, naming the option and the range it overlaps")
    func rangeAtStart() async throws {
        for (value, says) in [("1000-2000", "local users"), ("100000-200000", "subordinate"), ("65536", "FIRST-LAST")] {
            let refused = try await LatchkeyCommand.run(["serve", "--posix-uid-range", value], environment: ["LATCHKEY_ADMIN_TOKEN": ProviderTests.adminToken])
            #expect(refused.status != 0 && refused.stderr.contains("--posix-uid-range") && refused.stderr.contains(says), "\(value): \(refused.stderr)")
        }
    }
}
