import Foundation
@testable import LatchkeyHost
import LatchkeyProtocol
import Testing

/// What a host lets into its directory whatever the provider says (``HostDirectoryScreen``):
/// each rule by itself, with the line the journal gets.
@Suite("latchkey host: the directory's screen")
struct HostDirectoryScreenTests {
    static let screen = HostDirectoryScreen(idRange: 65536...99999, homeBase: "/home", shells: ["/bin/bash", "/bin/sh"])

    static func account(_ name: String, _ uid: Int64, home: String? = nil, shell: String = "/bin/bash", gecos: String = "") -> HostDirectoryPage.Account {
        HostDirectoryPage.Account(name: name, uid: uid, gid: uid, gecos: gecos, home: home ?? "/home/\(name)", shell: shell)
    }

    @Test("each hostile account is refused with its reason, an honest one kept", arguments: [
        (account("zero", 0), "Debian's system accounts"),
        (account("lowly", 999), "Debian's system accounts"),
        (account("local", 1000), "the local users adduser hands out"),
        (account("nobody2", 65534), "the IDs Debian and systemd reserve"),
        (account("outside", 100_000), "subordinate IDs"),
        (account("huge", 3_000_000_000), "past 2147483647"),
        (account("root", 70001), "a system account's"),
        (account("systemd-x", 70001), "a system account's"),
        (account("col:on", 70001), "not a POSIX name"),
        (account("new\nline", 70001), "not a POSIX name"),
        (account("nul\u{0}byte", 70001), "not a POSIX name"),
        (account("Upper", 70001), "not a POSIX name"),
        (account("relhome", 70001, home: "home/relhome"), "not an absolute path under /home"),
        (account("etchome", 70001, home: "/etc/etchome"), "not an absolute path under /home"),
        (account("dotdot", 70001, home: "/home/../etc"), "not an absolute path under /home"),
        (account("bare", 70001, home: "/home"), "not an absolute path under /home"),
        (account("evilshell", 70001, shell: "/tmp/evil"), "not in /etc/shells"),
        (account("gecos", 70001, gecos: "a:b"), "GECOS"),
        (account("bidi", 70001, gecos: "a\u{202E}b"), "GECOS"),
    ])
    func accounts(_ account: HostDirectoryPage.Account, _ says: String) {
        let (kept, refusals) = Self.screen.screen(HostDirectory(version: "1", accounts: [account, Self.account("good", 70500)], groups: []))
        #expect(kept.accounts.map(\.name) == ["good"])
        #expect(refusals.count == 1 && refusals.first?.contains(says) == true, "\(refusals)")
    }

    @Test("a gid that is not the uid, twins by name or ID, a group over a system name, an account's name or a reserved gid, and strangers among members")
    func groupsAndTwins() {
        var odd = Self.account("odd", 70002)
        odd.gid = 70003
        let directory = HostDirectory(version: "1", accounts: [
            Self.account("good", 70001), odd, Self.account("good", 70004), Self.account("twin", 70001),
        ], groups: [
            .init(name: "sudo", gid: 70100, sudo: true, members: ["good"]),
            .init(name: "good", gid: 70101, sudo: false, members: []),
            .init(name: "team", gid: 70001, sudo: false, members: []),
            .init(name: "low", gid: 10, sudo: false, members: []),
            .init(name: "ops", gid: 70102, sudo: true, members: ["good", "stranger", "good"]),
        ])
        let (kept, refusals) = Self.screen.screen(directory)
        #expect(kept.accounts.map(\.name) == ["good"])
        #expect(kept.groups.map(\.name) == ["ops"] && kept.groups.first?.members == ["good"])
        #expect(refusals.count == 8, "\(refusals)")
        #expect(refusals.contains { $0.contains("odd") && $0.contains("is not its uid") })
        #expect(refusals.contains { $0.contains("left out 2 members") })
    }

    @Test("an index leaves out what clashes with a local account or group, and past the offline limit serves groups without accounts")
    func index() {
        let directory = HostDirectory(version: "1", accounts: [Self.account("alice", 70001), Self.account("carol", 70002), Self.account("dave", 70003)], groups: [
            .init(name: "ops", gid: 70100, sudo: true, members: ["alice", "carol"]),
            .init(name: "staff2", gid: 70101, sudo: false, members: ["alice"]),
        ])
        var local = LocalAccounts()
        local.userNames = ["carol"]
        local.gids = [70003, 70101]
        let index = HostDirectoryIndex(directory: directory, local: local, servesAccounts: true)
        #expect(index.accounts.map(\.name) == ["alice"])
        #expect(index.group(named: "ops")?.members == ["alice"] && index.group(named: "staff2") == nil)
        #expect(index.memberships(of: "alice") == ["ops"] && index.sudoGroups == ["ops"])
        #expect(index.clashes.count == 3, "\(index.clashes)")
        let offline = HostDirectoryIndex(directory: directory, local: LocalAccounts(), servesAccounts: false)
        #expect(offline.accounts.isEmpty && offline.group(named: "alice") == nil && offline.group(named: "ops")?.members == [])
    }
}
