import Foundation
@testable import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// POSIX IDs that never change and are never handed out twice, and every name a host
/// could misread refused (docs/PROTOCOL.md section 14).
@Suite("Provider: POSIX accounts and groups")
struct POSIXAccountTests {
    static func status<Answer>(_ reply: AdminAPIClient.Reply<Answer>) -> String { HostDirectoryTests.status(reply) }

    @Test("a uid is allocated once: a rename keeps it (and the home), unset and set again gives it back, a deleted and recreated username gets a new one; a group's gid is never reused either", arguments: TestStore.available)
    func stableIDs(engine: TestStore) async throws {
        try await ProviderTests.withProvider(engine) { issuer, _ in
            let admin = ProviderTests.admin(issuer)
            let ada = try await HostDirectoryTests.person(admin, "ada")
            // Rename: same uid, same home, the new name; hosts see it under the new name.
            let renamed = try await admin.call(AdminAPI.renameIdentity, "ada", body: .init(username: "ada-l"))
            #expect(renamed.status == 200 && renamed.answer?.uid == ada && renamed.answer?.identity.username == "ada-l")
            let account = try #require(try await admin.call(AdminAPI.setPOSIXAccount, "ada-l", body: .init()).answer)
            #expect(account.uid == ada && account.home == "/home/ada" && account.username == "ada-l")
            // Unset and set again: the same uid.
            #expect(Self.status(try await admin.call(AdminAPI.unsetPOSIXAccount, "ada-l")) == "200")
            #expect(try await admin.call(AdminAPI.unsetPOSIXAccount, "ada-l").answer?.deleted == false)
            #expect(try await admin.call(AdminAPI.setPOSIXAccount, "ada-l", body: .init()).answer?.uid == ada)
            // Deleted and made again under the same name: a new uid.
            let id = try #require(renamed.answer?.identity.id)
            #expect(try await admin.call(AdminAPI.deleteIdentity, id).status == 200)
            let again = try await HostDirectoryTests.person(admin, "ada-l")
            #expect(again != ada && again > ada)
            // Groups: a deleted group's gid is not handed out again.
            let ops = try #require(try await admin.call(AdminAPI.createGroup, body: .init(name: "ops")).answer)
            #expect(ops.gid > again)
            #expect(Self.status(try await admin.call(AdminAPI.deleteGroup, "ops")) == "200")
            let opsAgain = try #require(try await admin.call(AdminAPI.createGroup, body: .init(name: "ops")).answer)
            #expect(opsAgain.gid != ops.gid && opsAgain.gid > ops.gid)
            // Changes to the fields keep the uid.
            let changed = try #require(try await admin.call(AdminAPI.setPOSIXAccount, "ada-l", body: .init(shell: "/usr/bin/zsh", home: "/srv/ada", gecos: "Ada L")).answer)
            #expect(changed.uid == again && changed.shell == "/usr/bin/zsh" && changed.home == "/srv/ada" && changed.gecos == "Ada L")
            let events = try await AuditLogTests.events(issuer, type: AuditEventType.posixChanged.rawValue)
            #expect(events.contains { $0.details?.change == "renamed" && $0.details?.uid == ada && $0.details?.username == "ada-l" })
            #expect(events.contains { $0.details?.change == "unset" && $0.details?.uid == ada })
            #expect(try await AuditLogTests.events(issuer, type: AuditEventType.identityRenamed.rawValue).count == 1)
        }
    }

    @Test("names a host could misread, reserved names, clashes and taken names are refused, each with its code", arguments: TestStore.available)
    func refusals(engine: TestStore) async throws {
        try await ProviderTests.withProvider(engine) { issuer, _ in
            let admin = ProviderTests.admin(issuer)
            // Usernames the provider takes but a POSIX host cannot.
            for name in ["Zed", "zëd", "9lives", "a" + String(repeating: "b", count: 32), "ada.l"] {
                let created = try await admin.call(AdminAPI.createIdentity, body: .init(username: name))
                try #require(created.status == 201, "\(name): \(String(decoding: created.body, as: UTF8.self))")
                let refused = Self.status(try await admin.call(AdminAPI.setPOSIXAccount, name, body: .init()))
                #expect(refused == "400 invalid_posix_name", "\(name): \(refused)")
            }
            // Group names with separators, controls, bidi, upper case, a leading dash, too long, reserved.
            for name in ["a:b", "a,b", "a\nb", "ops\u{202E}", "Ops", "-ops", "o/ps", "ops ", "", String(repeating: "o", count: 33)] {
                #expect(Self.status(try await admin.call(AdminAPI.createGroup, body: .init(name: name))) == "400 invalid_posix_name", "\(name.debugDescription)")
            }
            for name in ["sudo", "adm", "docker", "root", "systemd-journal"] {
                #expect(Self.status(try await admin.call(AdminAPI.createGroup, body: .init(name: name))) == "400 reserved_username", "\(name)")
            }
            // A group named like an account's private group, and an account named like a group.
            try await HostDirectoryTests.person(admin, "ada")
            #expect(Self.status(try await admin.call(AdminAPI.createGroup, body: .init(name: "ada"))) == "409 conflict")
            #expect(Self.status(try await admin.call(AdminAPI.createGroup, body: .init(name: "ops"))) == "201")
            #expect(Self.status(try await admin.call(AdminAPI.createGroup, body: .init(name: "ops"))) == "409 conflict")
            _ = try await admin.call(AdminAPI.createIdentity, body: .init(username: "ops"))
            #expect(Self.status(try await admin.call(AdminAPI.setPOSIXAccount, "ops", body: .init())) == "409 conflict")
            // Renames: to a taken name, a look-alike, a reserved name, a group's name, a non-POSIX name.
            _ = try await admin.call(AdminAPI.createIdentity, body: .init(username: "grace"))
            #expect(Self.status(try await admin.call(AdminAPI.renameIdentity, "ada", body: .init(username: "grace"))) == "409 conflict")
            #expect(Self.status(try await admin.call(AdminAPI.renameIdentity, "ada", body: .init(username: "GRACE"))) == "409 conflict")
            #expect(Self.status(try await admin.call(AdminAPI.renameIdentity, "ada", body: .init(username: "root"))) == "400 reserved_username")
            #expect(Self.status(try await admin.call(AdminAPI.renameIdentity, "ada", body: .init(username: "Ada2"))) == "400 invalid_posix_name")
            #expect(Self.status(try await admin.call(AdminAPI.renameIdentity, "grace", body: .init(username: "ada"))) == "409 conflict")
            // Shells, homes and GECOS a passwd line cannot hold.
            for change in [
                AdminAPI.POSIXAccountChange(shell: "bash"), .init(shell: "/bin/ba:sh"), .init(shell: "/bin/ba sh"), .init(home: "/home/../root"),
                .init(home: "/home//ada"), .init(home: "/"), .init(gecos: "Ada:0:0"), .init(gecos: "Ada\nroot::0:0::/:/bin/sh"),
                .init(gecos: "Ada\u{202E}"), .init(home: "/home/" + String(repeating: "a", count: 300)),
            ] {
                #expect(Self.status(try await admin.call(AdminAPI.setPOSIXAccount, "ada", body: change)) == "400 invalid_posix_name", "\(change)")
            }
            // Members, groups and identities that are not there.
            #expect(Self.status(try await admin.call(AdminAPI.addGroupMember, "nope", "ada")) == "404 not_found")
            #expect(Self.status(try await admin.call(AdminAPI.addGroupMember, "ops", "nobody-here")) == "404 not_found")
            #expect(Self.status(try await admin.call(AdminAPI.setPOSIXAccount, "nobody-here", body: .init())) == "404 not_found")
            #expect(Self.status(try await admin.call(AdminAPI.grantHostAccess, "web", "nope", body: .init())) == "404 not_found")
            // More labels than a host may have, a label a host may not have, a group cursor past any name.
            _ = try await HostDirectoryTests.host(issuer, "web-1", labels: [])
            #expect(Self.status(try await admin.call(AdminAPI.setHostLabels, "web-1", body: .init(labels: (0..<33).map { "l\($0)" }))) == "400 invalid_request")
            #expect(Self.status(try await admin.call(AdminAPI.setHostLabels, "web-1", body: .init(labels: ["web", "Web"]))) == "400 invalid_request")
            #expect(Self.status(try await admin.call(AdminAPI.listGroups, query: [(AdminAPI.GroupQuery.after, String(repeating: "g", count: 33))])) == "400 invalid_request")
            for label in ["Web", "web label", "-web", "we:b", String(repeating: "w", count: 64)] {
                #expect(Self.status(try await admin.call(AdminAPI.grantHostAccess, label, "ops", body: .init())) == "400 invalid_request", "\(label)")
            }
        }
    }

    @Test("a range running out is posix_ids_exhausted, not a wrap-around, and the IDs handed out stay", arguments: TestStore.available)
    func exhaustedRange(engine: TestStore) async throws {
        try await ProviderTests.withProvider(engine, { $0.posixIDRange = try! POSIXIDRange(first: 99998, last: 99999) }) { issuer, _ in
            let admin = ProviderTests.admin(issuer)
            #expect(try await HostDirectoryTests.person(admin, "ada") == 99998)
            #expect(Self.status(try await admin.call(AdminAPI.createGroup, body: .init(name: "ops"))) == "201")
            #expect(Self.status(try await admin.call(AdminAPI.createGroup, body: .init(name: "dev"))) == "409 posix_ids_exhausted")
            _ = try await admin.call(AdminAPI.createIdentity, body: .init(username: "grace"))
            #expect(Self.status(try await admin.call(AdminAPI.setPOSIXAccount, "grace", body: .init())) == "409 posix_ids_exhausted")
            #expect(try await admin.call(AdminAPI.setPOSIXAccount, "ada", body: .init()).answer?.uid == 99998, "an account that has its uid keeps it")
        }
    }

    @Test("a POSIX ID range over the host's own ranges is refused at start, each saying which")
    func ranges() throws {
        #expect(POSIXIDRange.default.first == 65536 && POSIXIDRange.default.last == 99999)
        #expect(try POSIXIDRange(parsing: "1879048192-2147352575").count == 268_304_384)
        for (text, says) in [
            ("0-100", "system accounts"), ("500-70000", "system accounts"), ("1000-2000", "local users"), ("60000-65536", "reserve"),
            ("65536-100000", "subordinate"), ("200000-300000", "subordinate"), ("600000-700000", "container"),
            ("2147352576-2147352577", "foreign"), ("2147483648-2147483649", "signed 32-bit"), ("99999-65536", "past the last"),
            ("65536", "FIRST-LAST"), ("a-b", "FIRST-LAST"), ("-1-5", "FIRST-LAST"), ("65536-99999-1", "FIRST-LAST"),
        ] {
            #expect(throws: ReferenceProviderError.self, "\(text)") { try POSIXIDRange(parsing: text) }
            do {
                _ = try POSIXIDRange(parsing: text)
            } catch {
                #expect(error.code == .invalidConfiguration && error.reason.contains(says), "\(text): \(error.reason)")
            }
        }
    }
}
