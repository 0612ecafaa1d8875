import Foundation
import LatchkeyOAuth
import LatchkeyCrypto
@testable import LatchkeyIdP
import Logging
import LatchkeyTestSupport
import Testing

/// The store against bad files, bad rows and failing transactions: each gets a typed
/// ``StoreError`` and nothing committed is lost.
@Suite("Provider store")
struct StoreTests {
    static func temporaryDirectory() -> URL {
        URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("latchkey-store-test-\(UUID().uuidString)")
    }

    static func code(_ body: () async throws -> Void) async -> StoreError.Code? {
        do {
            try await body()
            return nil
        } catch let error as StoreError {
            return error.code
        } catch {
            Issue.record("not a StoreError: \(error)")
            return nil
        }
    }

    @Test("a data directory open to others is refused, not repaired")
    func directoryModes() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        let code = await Self.code { _ = try await SQLiteProviderDatabase.open(directory: directory, logger: Logger(label: "test")) }
        #expect(code == .unsafePermissions)
        let mode = try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? Int
        #expect(mode == 0o755)
    }

    @Test("a database file or store key open to others is refused")
    func fileModes() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = ProviderConfiguration(adminToken: "t")
        configuration.dataDirectory = directory
        let store = try await ProviderStore.open(configuration, logger: Logger(label: "test"))
        await store.database.close()
        let database = directory.appendingPathComponent(StoreFiles.databaseName).path
        let key = directory.appendingPathComponent(StoreFiles.storeKeyName).path
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: database)
        #expect(await Self.code { _ = try await ProviderStore.open(configuration, logger: Logger(label: "test")) } == .unsafePermissions)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: database)
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: key)
        let opened = await Self.code {
            let store = try await ProviderStore.open(configuration, logger: Logger(label: "test"))
            await store.database.close()
        }
        #expect(opened == .unsafePermissions)
    }

    @Test("a database whose schema is newer than this build is refused", arguments: TestStore.available)
    func schemaTooNew(engine: TestStore) async throws {
        try await engine.withProvider { provider in
            try await provider.context.database.transaction { transaction in
                try await transaction.execute("UPDATE latchkey_schema SET version = \(Int64(Migrations.currentVersion + 1))")
            }
            await provider.context.database.close()
            let code = await Self.code {
                let again = try await Provider.open(provider.context.configuration)
                await again.context.database.close()
            }
            #expect(code == .schemaTooNew)
        }
    }

    @Test("in one commit group, a transaction that fails rolls back only itself", arguments: TestStore.available)
    func failingTransactionIsolated(engine: TestStore) async throws {
        try await engine.withProvider { provider in
            struct Abort: Error {}
            let outcomes = await withTaskGroup(of: String?.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        do {
                            try await provider.context.database.transaction { transaction in
                                _ = try await provider.identities.create(username: "user\(index)", email: nil, displayName: nil, in: transaction)
                                if index % 4 == 0 { throw Abort() }
                            }
                            return nil
                        } catch is Abort {
                            return "aborted"
                        } catch {
                            return "\(error)"
                        }
                    }
                }
                return await group.reduce(into: [String]()) { if let failure = $1 { $0.append(failure) } }
            }
            #expect(outcomes.filter { $0 != "aborted" } == [], "only the aborted transactions fail")
            #expect(outcomes.count == 10)
            let stored = try await provider.context.database.transaction { transaction in
                try await provider.identities.list(after: nil, limit: 500, in: transaction).map(\.username)
            }
            #expect(Set(stored) == Set((0..<40).filter { $0 % 4 != 0 }.map { "user\($0)" }))
        }
    }

    @Test("in memory, reads run beside writes without a transaction of their own, see every committed write, and cannot write")
    func inMemoryReads() async throws {
        let database = try await SQLiteProviderDatabase.open(directory: nil, logger: Logger(label: "test"))
        let created = await withTaskGroup(of: Int.self) { group in
            for index in 0..<60 {
                group.addTask {
                    if index % 3 == 0 {
                        return (try? await database.read { try await $0.query("SELECT count(*) AS n FROM identities") })?.count ?? -1
                    }
                    let inserted = try? await database.transaction { transaction in
                        try await transaction.query("""
                            INSERT INTO identities (id, username, username_key, username_skeleton, display_name, created_at)
                            VALUES (\("id\(index)"), \("u\(index)"), \("u\(index)"), \("u\(index)"), \("U"), \(Int64(index)))
                            """)
                    }
                    return inserted == nil ? -1 : 1
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(!created.contains(-1), "every read and write succeeds")
        let count = try await database.read { try await $0.query("SELECT count(*) AS n FROM identities") }
        #expect(try count.first?.decode("n") as Int64? == 40)
        let refused = await Self.code {
            _ = try await database.read { try await $0.query("DELETE FROM identities") }
        }
        #expect(refused == .engineFailure)
        let after = try await database.read { try await $0.query("SELECT count(*) AS n FROM identities") }
        #expect(try after.first?.decode("n") as Int64? == 40, "the refused read wrote nothing")
        _ = try await database.transaction { try await $0.query("DELETE FROM identities WHERE id = \("id1")") }
        let afterWrite = try await database.read { try await $0.query("SELECT count(*) AS n FROM identities") }
        #expect(try afterWrite.first?.decode("n") as Int64? == 39, "the writer writes after a refused read")
        await database.close()
    }

    @Test("values are bound, never spliced into statements", arguments: TestStore.available)
    func valuesAreBound(engine: TestStore) async throws {
        try await engine.withProvider { provider in
            let name = "o'brien\"--;DROP"
            let identity = try await provider.context.database.transaction { transaction in
                try await provider.identities.create(username: name, email: "x'); DELETE FROM identities; --@example.com", displayName: nil, in: transaction)
            }
            let found = try await provider.context.database.transaction { try await provider.identities.named(name, in: $0) }
            #expect(found?.id == identity.id)
            #expect(found?.email == "x'); DELETE FROM identities; --@example.com")
        }
    }

    @Test("a row holding a value of the wrong type is a corruptRow error, not a crash", arguments: TestStore.available)
    func corruptRow(engine: TestStore) async throws {
        try await engine.withProvider { provider in
            let (identity, _) = try await provider.administration.createIdentity(username: "ada", email: nil, displayName: nil)
            // A counter past UInt32, and a public key that is not COSE.
            try await provider.context.database.transaction { transaction in
                try await transaction.execute("""
                    INSERT INTO credentials (id, identity_id, public_key, sign_count, backup_eligible, backup_state, user_verified,
                        attestation_format, aaguid, transports, created_at)
                    VALUES (\(Data([1, 2, 3])), \(identity.id), \(Data([0xFF])), \(Int64(1) << 40), 0, 0, 0, 'none', \(Data(count: 16)), '', 0)
                    """)
            }
            let code = await Self.code { _ = try await provider.administration.credentials(of: identity.id) }
            #expect(code == .corruptRow)
        }
    }
}

extension TestStore {
    /// A provider over a fresh store of this engine, without HTTP, closed after `body`.
    func withProvider(_ body: (Provider) async throws -> Void) async throws {
        try await with { storage, storeKey in
            var configuration = ProviderConfiguration(adminToken: "t")
            configuration.storage = storage
            configuration.storeKey = storeKey
            try await Provider.closing(configuration, body)
        }
    }
}

extension Provider {
    /// A provider over `configuration`'s store, migrated and ready, without HTTP.
    static func open(_ configuration: ProviderConfiguration) async throws -> Provider {
        let store = try await ProviderStore.open(configuration, logger: Logger(label: "test"))
        let context = ProviderContext(configuration: configuration, database: store.database, storeKey: store.storeKey, logger: Logger(label: "test"))
        do {
            try await context.prepare()
        } catch {
            await store.database.close()
            throw error
        }
        return Provider(context: context)
    }
}

/// PostgreSQL going away and coming back, through a relay the test cuts: the provider
/// starts without it, answers 503 while it is gone, and recovers by itself.
@Suite("Provider store unreachable", .timeLimit(.minutes(5)))
struct StoreUnreachableTests {
    @Test(
        "PostgreSQL unreachable at start and mid-run: 503 temporarily_unavailable, liveness still answers, service resumes when it is back",
        .requires(if: TestStore.postgresURL != nil, "LATCHKEY_TEST_POSTGRES_URL is not set")
    )
    func unreachable() async throws {
        try await TestStore.postgres.with { storage, storeKey in
            guard case .postgres(var location) = storage else { throw StoreError.invalidConfiguration("not PostgreSQL") }
            let relay = try TCPRelay(targetPort: location.port)
            location.port = relay.port
            var configuration = ProviderConfiguration(adminToken: ProviderTests.adminToken)
            configuration.logLevel = .critical
            configuration.storage = .postgres(location)
            configuration.storeKey = storeKey
            try await withReferenceProvider(configuration: configuration) { issuer in
                @Sendable func create(_ name: String) async throws -> (Int, JSONValue) {
                    try await ProviderTests.request(
                        "POST", issuer.appendingPathComponent("admin/identities"),
                        json: try JSONSerialization.data(withJSONObject: ["username": name]), headers: ["Authorization": "Bearer \(ProviderTests.adminToken)"]
                    )
                }
                @Sendable func eventually(_ name: String) async throws -> Int {
                    var status = 0
                    for _ in 0..<60 where status != 201 {
                        status = try await create(name).0
                        if status != 201 { try await Task.sleep(for: .milliseconds(500)) }
                    }
                    return status
                }
                // Down from the start: the provider listens, liveness answers, the rest is 503.
                let (down, refusal) = try await create("ada")
                #expect(down == 503 && refusal["error"]?.stringValue == "temporarily_unavailable")
                #expect(try await ProviderTests.request("GET", issuer.appendingPathComponent("health")).0 == 200)
                #expect(try await ProviderTests.request("GET", issuer.appendingPathComponent("healthz")).0 == 200, "liveness does not depend on the store")
                #expect(try await ProviderTests.request("GET", issuer.appendingPathComponent("readyz")).0 == 503, "not ready without the store")
                // Back: the store is migrated on the next request, and it goes through.
                relay.start()
                #expect(try await eventually("ada") == 201)
                #expect(try await ProviderTests.request("GET", issuer.appendingPathComponent("readyz")).0 == 200, "ready once the store is back")
                // Gone mid-run, then back again.
                relay.stop()
                #expect(try await create("grace").0 == 503)
                #expect(try await ProviderTests.request("GET", issuer.appendingPathComponent("readyz")).0 == 503, "not ready while the store is gone")
                #expect(try await ProviderTests.request("GET", issuer.appendingPathComponent("jwks")).0 == 200, "signing keys are cached")
                relay.start()
                #expect(try await eventually("grace") == 201)
                relay.stop()
            }
        }
    }
}
