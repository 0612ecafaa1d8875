import Foundation
import Glibc
import LatchkeyHost
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

extension HostNSSTests {
    /// `latchkey host run` against a provider on loopback, seen through the host's own NSS:
    /// `getent` and `id` resolve the directory through nss-systemd, which asks the daemon's
    /// socket under /run/systemd/userdb (docs/guides/fleet.md; docs/PROTOCOL.md
    /// section 15).
    @Suite("latchkey host: the fleet's accounts and groups through NSS", .serialized)
    struct HostDaemonTests {
        @Test("getent passwd and group, and id with its groups, show the directory through nss-systemd; an account named like a local one is not served, and the journal says so; status and sync --now report it")
        func nss() async throws {
            try HostFleet.requireNSS()
            try await ProviderHarness.run { provider in
                let host = try await HostFleet.enroll(provider, sudoers: true)
                let alice = try await host.account(provider, "alice")
                let bob = try await host.account(provider, "bob")
                // A local account the directory also has: the local one wins.
                let clash = "lkclash\(UInt16.random(in: 1000...9999))"
                let added = try await ChildProcess.run(URL(fileURLWithPath: "/usr/sbin/useradd"), ["-M", "-s", "/usr/sbin/nologin", clash])
                try #require(added.status == 0, "useradd: \(added.stderr)")
                defer { _ = try? Process.run(URL(fileURLWithPath: "/usr/sbin/userdel"), arguments: [clash]).waitUntilExit() }
                let clashing = try await host.account(provider, clash)
                let ops = try await HostFleet.group(provider, "ops", members: ["alice", clash], label: "web", sudo: true)
                _ = try await HostFleet.group(provider, "dev", members: ["bob"])

                let process = try await host.run()
                defer { ChildProcess.stop(process) }

                let passwd = try await HostFleet.getent(["passwd", "alice"])
                #expect(passwd.stdout == "alice:x:\(alice.account.uid):\(alice.account.uid):alice:\(host.homeBase.path)/alice:/bin/bash\n", "\(passwd)")
                let byUID = try await HostFleet.getent(["passwd", String(alice.account.uid)])
                #expect(byUID.stdout.hasPrefix("alice:"))
                let group = try await HostFleet.getent(["group", "ops"])
                #expect(group.stdout == "ops:x:\(ops.gid):alice\n", "the clashing account is no member: \(group)")
                let privateGroup = try await HostFleet.getent(["group", "alice"])
                #expect(privateGroup.stdout == "alice:x:\(alice.account.uid):\n")
                let id = try await HostFleet.id("alice")
                #expect(id.stdout == "uid=\(alice.account.uid)(alice) gid=\(alice.account.uid)(alice) groups=\(alice.account.uid)(alice),\(ops.gid)(ops)\n", "\(id)")
                // bob's group has no access to hosts labelled web: he is not here at all.
                #expect(try await HostFleet.getent(["passwd", "bob"]).status == 2)
                #expect(try await HostFleet.getent(["passwd", String(bob.account.uid)]).status == 2)
                #expect(try await HostFleet.getent(["group", "dev"]).status == 2)
                // The local account wins; the directory's one is not served by name or uid.
                let local = try await HostFleet.getent(["passwd", clash])
                #expect(local.status == 0 && !local.stdout.contains(":\(clashing.account.uid):"), "\(local)")
                #expect(try await HostFleet.getent(["passwd", String(clashing.account.uid)]).status == 2)
                #expect(try UserDatabaseClient.account(named: clash, socket: host.socket) == nil)
                #expect(host.journal().contains("not serving account \(clash) (uid \(clashing.account.uid))"), "\(host.journal())")
                // Enumeration: the served accounts are listed after the local ones.
                let all = try await HostFleet.getent(["passwd"])
                #expect(all.stdout.contains("\nalice:x:\(alice.account.uid):") && !all.stdout.contains("\nbob:x:"))

                // sudo for ops on this host, as a sudoers drop-in the daemon keeps.
                let sudoers = try String(contentsOf: host.sudoersFile, encoding: .utf8)
                #expect(sudoers.hasSuffix("\n%ops ALL=(ALL:ALL) ALL\n") && !sudoers.contains("dev"), "\(sudoers)")
                let mode = try FileManager.default.attributesOfItem(atPath: host.sudoersFile.path)[.posixPermissions] as? Int
                #expect(mode == 0o440)
                if FileManager.default.isExecutableFile(atPath: "/usr/sbin/visudo") {
                    let checked = try await ChildProcess.run(URL(fileURLWithPath: "/usr/sbin/visudo"), ["-c", "-f", host.sudoersFile.path])
                    #expect(checked.status == 0, "\(checked)")
                }

                let status = try await host.command(["status", "--json"])
                try #require(status.status == 0, "\(status.stderr)")
                let decoder = JSONDecoder()
                decoder.dateDecodingStrategy = .iso8601
                let shown = try decoder.decode(HostStatus.self, from: Data(status.stdout.utf8))
                #expect(shown.accountsServed == 1 && shown.clashes == 1 && shown.providerReachable && shown.servingAccounts && shown.daemonPID == process.processIdentifier)

                // A change at the provider shows after sync --now, without waiting.
                let removed = try await provider.admin.call(AdminAPI.removeGroupMember, "ops", "alice")
                #expect(removed.status == 200)
                let synced = try await host.command(["sync", "--now"])
                #expect(synced.status == 0, "\(synced.stderr)")
                #expect(try await HostFleet.getent(["passwd", "alice"]).status == 2, "alice left ops: she is gone from this host")
                // ops has no member here now, but keeps its sudo line: the grant is the group's.
                #expect(try String(contentsOf: host.sudoersFile, encoding: .utf8).contains("%ops ALL=(ALL:ALL) ALL"))
            }
        }
    }
}
