import Foundation
@testable import LatchkeyIdP
import Testing

/// Usernames against UTS #39 (docs/SECURITY.md, "Usernames"): skeletons over the whole
/// confusables table, "highly restrictive" over every script, and the stored skeletons
/// remade when the rule changes.
@Suite("Usernames")
struct UsernameTests {
    @Test("look-alikes share a skeleton", arguments: [
        ("ada", "\u{0251}da"), ("o", "\u{0585}"), ("liz", "l\u{0131}z"), ("modern", "rnodern"),
        ("lan", "Ian"), ("ollie", "0llie"), ("ace", "\u{0430}\u{0441}\u{0435}"), ("ada", "ＡＤＡ"), ("paypai", "\u{0440}\u{0430}\u{0443}\u{0440}\u{0430}\u{04CF}"),
    ])
    func lookAlikes(_ pair: (String, String)) {
        #expect(Username.skeleton(pair.0) == Username.skeleton(pair.1), "\(pair.0) / \(pair.1)")
    }

    @Test("a name is also checked as typed: NFKC turns lunate sigma (U+03F2) into ς, but it was typed to pass for c")
    func typedSkeleton() {
        #expect(Username.skeletons(ofTyped: "\u{03F2}\u{03F2}").contains(Username.skeleton("cc")))
        #expect(Username.skeletons(ofTyped: "ada") == [Username.skeleton("ada")])
    }

    @Test("different names keep different skeletons")
    func distinct() {
        #expect(Username.skeleton("ada") != Username.skeleton("adam"))
        #expect(Username.skeleton("bob") != Username.skeleton("rob"))
    }

    @Test("highly restrictive: one script, or Latin with Han and Kana, Bopomofo or Hangul")
    func scripts() throws {
        for accepted in ["ada", "Ελένη", "Олег", "山田taro", "やまだ山田", "김철수kim", "user_01", "ադա"] {
            #expect(throws: Never.self, "\(accepted)") { try Username.validated(accepted) }
        }
        for refused in ["p\u{0430}ypal", "ada\u{13AA}", "\u{0585}llie", "a\u{0561}\u{10D0}", "ελένηolga", "김やまだ", "abc\u{05D0}"] {
            #expect(throws: ProviderError.self, "\(refused)") { try Username.validated(refused) }
        }
    }

    @Test("the generated tables name their Unicode versions")
    func versions() {
        #expect(UnicodeSecurityData.confusablesVersion == "13.0.0" && UnicodeSecurityData.scriptsVersion == "15.0.0")
    }

    @Test("a store made under another skeleton rule has its skeletons remade; look-alike old names both stay")
    func refresh() async throws {
        try await Provider.withInMemoryStore(Self.refresh)
    }

    static func refresh(_ provider: Provider) async throws {
        let database = provider.context.database
        do {
            try await database.transaction { transaction in
                _ = try await provider.identities.create(username: "modern", email: nil, displayName: nil, in: transaction)
                _ = try await provider.identities.create(username: "rnodern", email: nil, displayName: nil, in: transaction)
            }
            Issue.record("rnodern was accepted beside modern")
        } catch {}
        // As an older build would have left them: two look-alikes with old-rule skeletons.
        try await database.transaction { transaction in
            try await transaction.execute("DELETE FROM identities")
            for (id, name) in [("i1", "modern"), ("i2", "rnodern"), ("i3", "lan")] {
                try await transaction.execute("""
                    INSERT INTO identities (id, username, username_key, username_skeleton, email, display_name, created_at)
                    VALUES (\(id), \(name), \(Username.key(name)), \("old:" + name), \(nil as String?), \(name), \(Date()))
                    """)
            }
            try await transaction.execute("UPDATE provider_settings SET value = 'old' WHERE name = \(SkeletonRefresh.setting)")
        }
        try await SkeletonRefresh.run(on: database)
        let rows = try await database.transaction { transaction in
            try await transaction.query("SELECT id, username_skeleton FROM identities ORDER BY id").map { (try $0.decode("id", as: String.self), try $0.decode("username_skeleton", as: String.self)) }
        }
        #expect(rows.map(\.0) == ["i1", "i2", "i3"], "no identity is lost")
        #expect(rows[0].1 == Username.skeleton("modern") && rows[1].1 == Username.skeleton("modern") + "\u{1}i2")
        let taken = try await database.transaction { try await provider.identities.isTaken("Ian", in: $0) }
        #expect(taken, "a look-alike of an old name is refused after the refresh")
    }
}
