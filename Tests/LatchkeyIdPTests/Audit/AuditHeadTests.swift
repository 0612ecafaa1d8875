import Foundation
import LatchkeyCrypto
@testable import LatchkeyIdP
import LatchkeyProtocol
import LatchkeyTestSupport
import Synchronization
import Testing

/// What the red team did to the audit log with write access to the store and neither key
/// (docs/SECURITY.md, "Audit log"): cut it back to a checkpoint, copy a sealed row back
/// into the waiting table to have it sealed again, take the keys away, empty it. Each now
/// fails verification, on SQLite and PostgreSQL, online and offline, against a head kept
/// outside the store (`--expect`, `--head-file`) where the store alone cannot tell.
@Suite("Audit log: cut back, replayed, emptied, keys taken")
struct AuditHeadTests {
    static func verifyOnline(_ issuer: URL, expect: String) async throws -> AdminAPI.EventVerification {
        let reply = try await ProviderTests.admin(issuer).call(AdminAPI.verifyEvents, query: [(AdminAPI.EventQuery.expect, expect)])
        return try #require(reply.answer, "\(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
    }

    @Test("head marks are ID:HASH, strictly")
    func headMarks() throws {
        let hash = Base64URL.encode(Data(repeating: 7, count: 32))
        #expect(AuditHeadMark("12:\(hash)")?.id == 12 && AuditHeadMark("12:\(hash)")?.description == "12:\(hash)")
        for text in ["", "12", ":\(hash)", "-1:\(hash)", "+1:\(hash)", "1:\(hash)=", "1:\(hash.dropLast())", "١:\(hash)", "1:\(hash):x", "99999999999999999999:\(hash)"] {
            #expect(AuditHeadMark(text) == nil, "\(text)")
        }
    }

    @Test(
        "a copy of a sealed event put back in the waiting table is discarded, not sealed again; a log cut back to a checkpoint, stripped of its keys or emptied fails against the head kept outside the store",
        .requires(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "sqlite3 (Debian's sqlite3, which .ci/run installs) edits the store"),
        .requires(if: TestStore.postgresURL == nil || FileManager.default.isExecutableFile(atPath: "/usr/bin/psql"), "psql edits the PostgreSQL store"),
        arguments: TestStore.available
    )
    func attacks(engine: TestStore) async throws {
        try await engine.with { storage, key in
            let scratch = try TemporaryDirectory()
            let keyFile = try scratch.keyFile("store.key", bytes: key)
            let headFile = scratch.url.appendingPathComponent("audit-head")
            let recorded = Mutex<(checkpoint: Int64, head: String)>((0, ""))
            try await ProviderHarness.run(nil, { configuration in
                configuration.storage = storage
                configuration.storeKey = key
            }) { provider in
                for name in ["ada", "grace"] { _ = try await provider.createIdentity(name) }
                _ = try await AuditLogTests.verification(provider.issuer)
                // The newest signed checkpoint (the sealer may have made the first after any
                // of these events, or after each).
                let signed = try await ProviderTests.admin(provider.issuer).call(AdminAPI.eventCheckpoints)
                let checkpoint = try #require(signed.answer?.checkpoints.map(\.id).max())
                for name in ["alan", "edsger", "barbara", "donald", "frances", "john", "niklaus", "tony", "leslie"] { _ = try await provider.createIdentity(name) }
                let sealed = try await AuditLogTests.verification(provider.issuer)
                #expect(sealed.intact && sealed.newest >= checkpoint + 9, "\(sealed)")

                // A sealed event copied, code and nonce and all, into the waiting table.
                let columns = AuditLog.columns
                try await AuditLogTests.tamper(storage, "INSERT INTO audit_pending (\(columns), mac) SELECT \(columns), mac FROM audit_events WHERE seq = 1")
                let after = try await AuditLogTests.verification(provider.issuer)
                #expect(after.intact && after.newest == sealed.newest, "the copy was sealed as a new event: \(after)")
                #expect(try await AuditLogTests.events(provider.issuer).count == Int(sealed.newest))

                // The operator keeps the head outside the store.
                let kept = try await LatchkeyCommand.run(
                    ["admin", "events", "verify", "--idp", provider.issuer.absoluteString, "--head-file", headFile.path],
                    environment: ["LATCHKEY_ADMIN_TOKEN": ProviderHarness.adminToken]
                )
                #expect(kept.status == 0 && kept.stdout.contains("head: \(sealed.newest):"), "\(kept.stdout)\(kept.stderr)")
                let head = try String(contentsOf: headFile, encoding: .utf8).trimmingCharacters(in: .newlines)
                let online = try await Self.verifyOnline(provider.issuer, expect: head)
                #expect(head == after.head && online.intact, "\(head) \(online)")
                recorded.withLock { $0 = (checkpoint, head) }
            }
            let (checkpoint, head) = recorded.withLock { $0 }

            // Cut back to the checkpoint: later events and checkpoints deleted, the
            // checkpoint copied into the head. The store alone cannot tell.
            try await AuditLogTests.tamper(storage, """
                DELETE FROM audit_events WHERE seq > \(checkpoint);
                DELETE FROM audit_checkpoints WHERE seq > \(checkpoint);
                UPDATE audit_head SET seq = \(checkpoint), chain_hash = (SELECT chain_hash FROM audit_checkpoints WHERE seq = \(checkpoint)),
                    signature = (SELECT signature FROM audit_checkpoints WHERE seq = \(checkpoint)) WHERE singleton = 1
                """)
            let (alone, aloneOutput) = try await AuditLogTests.verifyOffline(storage, keyFile: keyFile, [])
            #expect(alone == 0 && aloneOutput.contains("intact"), "without a kept head a cut-back log verifies: \(aloneOutput)")
            for extra in [["--expect", head], ["--head-file", headFile.path]] {
                let (status, output) = try await AuditLogTests.verifyOffline(storage, keyFile: keyFile, extra)
                #expect(status == 1 && output.contains("before the head kept outside the store"), "\(extra[0]): \(output)")
            }
            #expect(try String(contentsOf: headFile, encoding: .utf8).trimmingCharacters(in: .newlines) == head, "a broken verify keeps the old head")
            try await ProviderHarness.run(nil, { configuration in
                configuration.storage = storage
                configuration.storeKey = key
            }) { provider in
                let online = try await Self.verifyOnline(provider.issuer, expect: head)
                #expect(!online.intact && online.problem?.contains("before the head kept outside the store") == true, "\(online)")
            }

            // The keys taken away, the events left: never intact.
            try await AuditLogTests.tamper(storage, "DELETE FROM provider_secrets WHERE name IN ('audit-mac', 'audit-signing-key')")
            let (keyless, keylessOutput) = try await AuditLogTests.verifyOffline(storage, keyFile: keyFile, [])
            #expect(keyless == 1 && keylessOutput.contains("not its keys"), "\(keylessOutput)")

            // Emptied as well: a store that looks new, but not to the kept head.
            try await AuditLogTests.tamper(storage, "DELETE FROM audit_events; DELETE FROM audit_checkpoints; DELETE FROM audit_head; DELETE FROM audit_pending")
            let (empty, emptyOutput) = try await AuditLogTests.verifyOffline(storage, keyFile: keyFile, [])
            #expect(empty == 0 && emptyOutput.contains("intact: 0 events"), "\(emptyOutput)")
            let (emptied, emptiedOutput) = try await AuditLogTests.verifyOffline(storage, keyFile: keyFile, ["--head-file", headFile.path])
            #expect(emptied == 1 && emptiedOutput.contains("emptied"), "\(emptiedOutput)")
        }
    }
}
