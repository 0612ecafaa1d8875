import Foundation
import Glibc
import LatchkeyCrypto
@testable import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// The audit log (docs/PROTOCOL.md, "Audit log"): every decision writes exactly its event,
/// with the right actor, subject and outcome, on both engines; no secret reaches an event;
/// the chain verifies, and names what was altered behind the provider's back.
@Suite("Audit log: one event per decision, chained and verified")
struct AuditLogTests {
    /// Every event the provider holds, oldest first, through the admin API.
    static func events(_ issuer: URL, type: String? = nil) async throws -> [AuditEvent] {
        var all: [AuditEvent] = []
        var after: Int64 = 0
        while true {
            var query = [(AdminAPI.EventQuery.after, String(after)), (AdminAPI.EventQuery.limit, "1000")]
            if let type { query.append((AdminAPI.EventQuery.type, type)) }
            let reply = try await ProviderTests.admin(issuer).call(AdminAPI.events, query: query)
            let page = try #require(reply.answer, "\(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
            all += page.events
            guard let next = page.next else { return all }
            after = next
        }
    }

    static func verification(_ issuer: URL) async throws -> AdminAPI.EventVerification {
        let reply = try await ProviderTests.admin(issuer).call(AdminAPI.verifyEvents)
        return try #require(reply.answer, "\(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
    }

    @Test("each decision writes exactly its event, with its actor, subject, client and outcome", arguments: TestStore.available)
    func eachDecisionItsEvent(engine: TestStore) async throws {
        try await ProviderTests.withProvider(engine) { issuer, authenticator in
            let admin = ProviderTests.admin(issuer)
            // A wrong admin token, three times: one event for the window.
            let wrong = AdminAPIClient(issuer: issuer, token: "not-the-admin-token")
            for _ in 0..<3 { #expect(try await wrong.call(AdminAPI.listClients).status == 401) }

            let (identity, bindURL) = try await ProviderTests.bind(issuer, authenticator)
            let client = try ProviderTests.client(issuer)
            let tokens = try await ProviderTests.signIn(issuer, authenticator, client: client)
            let refreshed = try await client.refresh(tokens)
            try await client.revoke(try #require(refreshed.refreshToken))

            // A sign-in whose assertion is for another challenge: refused, and recorded.
            let authorization = try await client.authorizationRequest(scopes: ["openid"])
            let (_, answer) = try await ProviderTests.request("GET", authorization.url, headers: ["Accept": "application/json"])
            let authenticateURL = try ProviderTests.url(answer["authenticateURL"]?.stringValue)
            let (_, challenge) = try await ProviderTests.request("GET", authenticateURL)
            var options = try PublicKeyCredentialRequestOptionsJSON(json: challenge.json())
            options.challenge = Base64URLBytes(Data(repeating: 7, count: 32))
            let (assertion, _) = try authenticator.getAssertion(options, origin: ProviderTests.origin(issuer))
            let (refused, _) = try await ProviderTests.request("POST", authenticateURL, json: try assertion.json())
            #expect(refused == 400)
            let secrets = [
                ProviderTests.adminToken, "not-the-admin-token", tokens.accessToken, tokens.refreshToken, tokens.idToken, refreshed.accessToken,
                refreshed.refreshToken, URLComponents(url: bindURL, resolvingAgainstBaseURL: false)?.queryItems?.first?.value,
                Base64URL.encode(assertion.response.signature.data), Base64URL.encode(assertion.response.clientDataJSON.data),
            ].compactMap { $0 }

            let registration = AdminAPI.Client(id: "audited-client", grantTypes: ["authorization_code"], redirectURIs: ["https://app.example/cb"])
            #expect(try await admin.call(AdminAPI.createClient, body: registration).status == 201)
            #expect(try await admin.call(AdminAPI.deleteClient, "audited-client").status == 200)
            let credentials = try #require(try await admin.call(AdminAPI.credentials, identity).answer)
            let credentialID = try #require(credentials.credentials.first?.id)
            #expect(try await admin.call(AdminAPI.revokeCredential, credentialID).status == 200)
            #expect(try await admin.call(AdminAPI.deleteIdentity, identity).status == 200)

            let events = try await Self.events(issuer)
            let types = events.map(\.type.rawValue)
            #expect(types == [
                "admin.token.refused", "identity.created", "credential.registered", "signin.succeeded", "token.issued", "token.refreshed",
                "token.revoked", "signin.failed", "client.created", "client.deleted", "credential.revoked", "identity.deleted",
            ], "\(types)")
            #expect(events.map(\.id) == Array(1...Int64(events.count)), "ids are 1, 2, 3, … in order")
            func event(_ type: String) throws -> AuditEvent {
                guard let found = events.first(where: { $0.type.rawValue == type }) else { throw TestSupportError("no \(type) event") }
                return found
            }

            let refusedAdmin = try event("admin.token.refused")
            #expect(refusedAdmin.outcome == .failure && refusedAdmin.actor.kind == .anonymous && refusedAdmin.error == "invalid_token")
            #expect(refusedAdmin.address == "127.0.0.1")
            let created = try event("identity.created")
            #expect(created.actor == .admin && created.subject == identity && created.details?.username == "ada")
            let registered = try event("credential.registered")
            #expect(registered.actor == .identity(identity) && registered.subject == identity && registered.details?.credential == credentialID)
            let signedIn = try event("signin.succeeded")
            #expect(signedIn.actor == .identity(identity) && signedIn.subject == identity && signedIn.client == "latchkey-cli")
            #expect(signedIn.outcome == .success && signedIn.details?.credential == credentialID && signedIn.address == "127.0.0.1")
            let issued = try event("token.issued")
            #expect(issued.actor == .client("latchkey-cli") && issued.subject == identity && issued.details?.grantType == "authorization_code")
            #expect(try event("token.refreshed").details?.grantType == "refresh_token")
            #expect(try event("token.revoked").subject == identity)
            let failed = try event("signin.failed")
            #expect(failed.outcome == .failure && failed.error == "invalid_assertion" && failed.subject == identity && failed.client == "latchkey-cli")
            #expect(try event("client.created").client == "audited-client")
            #expect(try event("credential.revoked").subject == identity)
            #expect(try event("identity.deleted").actor == .admin)
            for event in events {
                let object = try #require(try? JSONValue(json: try JSONEncoder().encode(event)))
                #expect(object["time"]?.stringValue.flatMap(AuditEvent.parseTime) != nil, "time is RFC 3339: \(object)")
                #expect(event.hash?.count == 43, "each event carries its link")
            }

            // No token, code, assertion or admin token in any event.
            let dump = String(decoding: try JSONEncoder().encode(events), as: UTF8.self)
            #expect(secrets.count >= 9)
            for secret in secrets { #expect(!dump.contains(secret), "an event holds a secret of \(secret.count) characters") }

            // Filters: by type and by subject.
            #expect(try await Self.events(issuer, type: "token.issued").map(\.id) == [issued.id])
            let verified = try await Self.verification(issuer)
            #expect(verified.intact && verified.checked == Int64(events.count) && verified.checkpoints >= 1, "\(verified)")
        }
    }

    /// Runs SQL on a stopped provider's store with the engine's own tool: `sqlite3` on the
    /// data directory's file, `psql` on the database.
    static func tamper(_ storage: ProviderConfiguration.Storage, _ sql: String) async throws {
        let run: (status: Int32, output: String)
        switch storage {
        case .sqlite(let directory):
            run = try await ChildProcess.tool(["sqlite3", directory.appendingPathComponent("latchkey.sqlite3").path, sql])
        case .postgres(let location):
            run = try await ChildProcess.tool(
                ["psql", Self.url(location), "-q", "-v", "ON_ERROR_STOP=1", "-c", sql], environment: ["PGPASSWORD": location.password ?? ""]
            )
        case .memory:
            throw TestSupportError("a memory store cannot be edited from outside")
        }
        try #require(run.status == 0, "\(sql): \(run.output)")
    }

    /// The store's URL without its password, which goes in `PGPASSWORD`: a command line is
    /// readable by every local user, and `latchkey` refuses a password there.
    static func url(_ location: PostgresLocation) -> String {
        "postgresql://\(location.user)@\(location.host):\(location.port)/\(location.database)?sslmode=disable"
    }

    /// `latchkey admin events verify` on the store itself, with `extra` arguments: exit
    /// status and output.
    static func verifyOffline(_ storage: ProviderConfiguration.Storage, keyFile: URL, _ extra: [String] = []) async throws -> (Int32, String) {
        var arguments = ["admin", "events", "verify", "--store-key-file", keyFile.path] + extra
        var environment: [String: String] = [:]
        switch storage {
        case .sqlite(let directory): arguments += ["--data-dir", directory.path]
        case .postgres(let location):
            arguments += ["--database", Self.url(location)]
            environment["PGPASSWORD"] = location.password ?? ""
        case .memory: throw TestSupportError("a memory store cannot be read from outside")
        }
        let run = try await LatchkeyCommand.run(arguments, environment: environment)
        return (run.status, run.stdout + run.stderr)
    }

    @Test(
        "a refusal whose event the store refused while it was locked (admin.token.refused) is written once the store is back, with the time of the refusal",
        .requires(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "sqlite3 (Debian's sqlite3, which .ci/run installs) locks the store")
    )
    func refusalOutlivesABlink() async throws {
        try await TestStore.sqlite.with { storage, key in
            try await ProviderHarness.run(nil, { configuration in
                configuration.storage = storage
                configuration.storeKey = key
            }) { provider in
                guard case .sqlite(let directory) = storage else { throw TestSupportError("not a SQLite store") }
                // Another process holds the write lock: the provider's writes wait out their
                // busy timeout, then fail, as they do while a database restarts.
                let input = Pipe()
                let output = Pipe()
                let locker = try SpawnedProcess(
                    URL(fileURLWithPath: "/usr/bin/sqlite3"), [directory.appendingPathComponent("latchkey.sqlite3").path],
                    stdin: .pipe(input), stdout: .pipe(output), stderr: .null
                )
                defer { locker.send(SIGKILL) }
                try input.fileHandleForWriting.write(contentsOf: Data("BEGIN EXCLUSIVE;\nSELECT 'locked';\n".utf8))
                let locked = await ChildProcess.firstLine(of: output, timeout: .seconds(10)) { $0.contains("locked") }
                try #require(locked.line != nil, "sqlite3 took the lock: \(locked.transcript)")

                let refusedAt = Date()
                let wrong = AdminAPIClient(issuer: provider.issuer, token: "not-the-admin-token-at-all-0123456789")
                #expect(try await wrong.call(AdminAPI.listIdentities).status == 401)
                let answeredAt = Date()
                // The store stays locked a while longer, so a time taken when the event is
                // finally written would be seconds after the answer.
                try await Task.sleep(for: .seconds(3))
                try input.fileHandleForWriting.write(contentsOf: Data("COMMIT;\n.quit\n".utf8))
                locker.waitUntilExit()

                var refused: [AuditEvent] = []
                let deadline = Date().addingTimeInterval(20)
                while refused.isEmpty, Date() < deadline {
                    try await Task.sleep(for: .milliseconds(200))
                    refused = try await Self.events(provider.issuer, type: AuditEventType.adminTokenRefused.rawValue)
                }
                #expect(refused.count == 1, "the refusal's event was lost")
                let time = try #require(refused.first?.time)
                // Within the request, give or take the second that times are kept to.
                #expect(time >= refusedAt.addingTimeInterval(-1) && time <= answeredAt.addingTimeInterval(1), "the event keeps the refusal's time: \(time), asked \(refusedAt), answered \(answeredAt)")
                #expect(try await Self.verification(provider.issuer).intact)
            }
        }
    }

    /// Every file of `directory`: its name, size, mode and contents' digest.
    static func snapshot(_ directory: URL) throws -> [String: String] {
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let url = directory.appendingPathComponent(name)
            let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
            let digest = try DigestAlgorithm.sha256.hash(Data(contentsOf: url)).map { String(format: "%02x", $0) }.joined()
            files[name] = "\(attributes[.size] ?? 0) \(attributes[.posixPermissions] ?? 0) \(digest)"
        }
        return files
    }

    @Test("admin events verify --data-dir creates and changes nothing: with the store key kept elsewhere it fails without making a store.key, and with the key given it reads the store as it is")
    func verifyWritesNothing() async throws {
        try await TestStore.sqlite.with { storage, key in
            try await ProviderHarness.run(nil, { configuration in
                configuration.storage = storage
                configuration.storeKey = key
            }) { provider in
                for name in ["ada", "grace"] { _ = try await provider.createIdentity(name) }
                #expect(try await Self.verification(provider.issuer).checked == 2)
            }
            guard case .sqlite(let directory) = storage else { throw TestSupportError("not a SQLite store") }
            let before = try Self.snapshot(directory)
            #expect(before["store.key"] == nil, "the key is kept elsewhere: \(before.keys.sorted())")

            let without = try await LatchkeyCommand.run(["admin", "events", "verify", "--data-dir", directory.path])
            #expect(without.status != 0 && (without.stdout + without.stderr).contains("store key"), "\(without.stdout)\(without.stderr)")
            #expect(try Self.snapshot(directory) == before, "verify without the key changed the data directory")

            let scratch = try TemporaryDirectory()
            let (status, output) = try await Self.verifyOffline(storage, keyFile: try scratch.keyFile("store.key", bytes: key))
            #expect(status == 0 && output.contains("intact: 2 events"), "\(output)")
            let after = try Self.snapshot(directory)
            #expect(after == before, "verify with the key changed the data directory: \(before) → \(after)")
        }
    }

    @Test(
        "verify names the event edited, moved, inserted or deleted with sqlite3 or psql, and says intact otherwise",
        .requires(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3"), "sqlite3 (Debian's sqlite3, which .ci/run installs) edits the store"),
        .requires(if: TestStore.postgresURL == nil || FileManager.default.isExecutableFile(atPath: "/usr/bin/psql"), "psql edits the PostgreSQL store"),
        arguments: TestStore.available
    )
    func tampering(engine: TestStore) async throws {
        try await engine.with { storage, key in
            try await ProviderHarness.run(nil, { configuration in
                configuration.storage = storage
                configuration.storeKey = key
            }) { provider in
                for name in ["ada", "grace", "alan", "edsger", "barbara"] { _ = try await provider.createIdentity(name) }
                let verified = try await Self.verification(provider.issuer)
                #expect(verified.intact && verified.checked == 5, "\(verified)")
            }
            let scratch = try TemporaryDirectory()
            let keyFile = try scratch.keyFile("store.key", bytes: key)
            func expectBroken(at id: Int64, after sql: String, undo: String?) async throws {
                try await Self.tamper(storage, sql)
                let (status, output) = try await Self.verifyOffline(storage, keyFile: keyFile)
                #expect(status == 1 && output.contains("broken at event \(id):"), "\(sql) → \(status) \(output)")
                if let undo {
                    try await Self.tamper(storage, undo)
                    let (again, text) = try await Self.verifyOffline(storage, keyFile: keyFile)
                    #expect(again == 0 && text.contains("intact"), "after undoing \(sql): \(text)")
                }
            }
            let (status, output) = try await Self.verifyOffline(storage, keyFile: keyFile)
            #expect(status == 0 && output.contains("intact: 5 events"), "\(output)")

            try await expectBroken(
                at: 3, after: "UPDATE audit_events SET address = '10.6.6.6' WHERE seq = 3",
                undo: "UPDATE audit_events SET address = '127.0.0.1' WHERE seq = 3"
            )
            let swap = "UPDATE audit_events SET seq = -1 WHERE seq = 2; UPDATE audit_events SET seq = 2 WHERE seq = 4; UPDATE audit_events SET seq = 4 WHERE seq = -1"
            try await expectBroken(at: 2, after: swap, undo: swap)
            // A copy of event 1, valid authentication code and all, put at the end.
            try await expectBroken(at: 6, after: """
                INSERT INTO audit_events (seq, chain_hash, occurred_at, event_type, outcome, error, actor_kind, actor_id, subject, client, address, user_agent, details, mac)
                SELECT (SELECT max(seq) FROM audit_events) + 1, chain_hash, occurred_at, event_type, outcome, error, actor_kind, actor_id, subject, client,
                    address, user_agent, details, mac FROM audit_events WHERE seq = 1
                """, undo: "DELETE FROM audit_events WHERE seq = 6")
            try await expectBroken(at: 4, after: "DELETE FROM audit_events WHERE seq = 4", undo: nil)
        }
    }

    @Test("retention prunes whole checkpointed segments and the chain verifies from the kept checkpoint; a segment cut without its audit.pruned does not", arguments: TestStore.available)
    func retention(engine: TestStore) async throws {
        try await engine.with { storage, key in
            let clock = TestClock()
            var configuration = ProviderConfiguration(adminToken: "t")
            configuration.storage = storage
            configuration.storeKey = key
            configuration.clock = clock.provider
            try await Provider.closing(configuration) { provider in
                try await provider.context.prepare()
                let sealer = AuditSealer(context: provider.context)
                func create(_ names: [String]) async throws {
                    for name in names { _ = try await provider.administration.createIdentity(username: name, email: nil, displayName: nil, now: clock.now) }
                    try await sealer.seal(now: clock.now)
                }
                try await create(["ada", "grace"])          // events 1, 2; the first checkpoint at 2
                clock.advance(by: 7200)
                try await create(["alan", "edsger"])        // events 3, 4; an hour on, a checkpoint at 4
                clock.advance(by: 7200)
                try await sealer.prune(retention: 3 * 3600, now: clock.now)
                try await sealer.seal(now: clock.now)       // event 5: audit.pruned through 2
                let verified = try await provider.context.auditVerifier().verify()
                #expect(verified.intact && verified.anchor == 2 && verified.checked == 3 && verified.newest == 5, "\(verified)")
                let remaining = try await provider.context.database.read { try await $0.query("SELECT seq FROM audit_events ORDER BY seq") }
                #expect(try remaining.map { try $0.decode("seq", as: Int64.self) } == [3, 4, 5])

                // Cut the next segment by hand, as retention would but without its record.
                try await provider.context.database.transaction { transaction in
                    try await transaction.execute("DELETE FROM audit_events WHERE seq <= 4")
                    try await transaction.execute("DELETE FROM audit_checkpoints WHERE seq < 4")
                }
                let cut = try await provider.context.auditVerifier().verify()
                #expect(!cut.intact && cut.firstBroken == 1 && cut.problem?.contains("audit.pruned") == true, "\(cut)")
            }
        }
    }

    @Test("an event's details are written as JSON any decoder reads back, members sorted, hostile strings escaped")
    func detailsEncoding() throws {
        let hostile = "a\"b\\c\u{0}\u{1B}[2J\n\u{202E}é/€"
        let details = AuditEvent.Details(
            credential: hostile, grantType: "urn:ietf:params:oauth:grant-type:device_code", scope: "openid ssh", username: hostile,
            limit: "token", windowSeconds: 60, through: Int64.max, serial: "0a", fingerprint: "SHA256:x", principals: [hostile, "ada", ""],
            validAfter: "2026-11-27T10:00:00Z", validBefore: "2026-11-27T18:00:00Z", attestation: hostile,
            service: hostile, remoteHost: hostile, change: hostile, uid: 65536, group: hostile, gid: -1, labels: [hostile, "web"], sudo: true
        )
        let encoded = try #require(AuditEntry.encode(details))
        #expect(try JSONDecoder().decode(AuditEvent.Details.self, from: Data(encoded.utf8)) == details)
        let reference = JSONEncoder()
        reference.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let plain = AuditEvent.Details(
            credential: "abc", grantType: "authorization_code", scope: "openid", windowSeconds: 60, serial: "7", fingerprint: "SHA256:y",
            principals: ["ada", "deploy"], validAfter: "2026-11-27T10:00:00Z", validBefore: "2026-11-27T18:00:00Z", attestation: "tpm",
            service: "sshd", remoteHost: "203.0.113.5", change: "granted", uid: 99999, group: "ops", gid: 70000, labels: ["web"], sudo: false
        )
        #expect(AuditEntry.encode(plain) == String(decoding: try reference.encode(plain), as: UTF8.self))
        #expect(encoded == String(decoding: try reference.encode(details), as: UTF8.self), "hostile strings escaped as JSONEncoder escapes them")
        #expect(AuditEntry.encode(AuditEvent.Details()) == "{}")
        #expect(!encoded.unicodeScalars.contains { $0.value < 0x20 }, "no raw control character")
    }

    @Test("migration 11 moves the events a store of schema 10 had waiting into the waiting table, in order, and the chain verifies once they are sealed", arguments: TestStore.available)
    func waitingEventsMigrate(engine: TestStore) async throws {
        try await engine.with { storage, key in
            var configuration = ProviderConfiguration(adminToken: "t")
            configuration.storage = storage
            configuration.storeKey = key
            configuration.auditSealInterval = .seconds(3600)
            try await Provider.closing(configuration) { provider in
                try await provider.context.prepare()
                let sealer = AuditSealer(context: provider.context)
                // Events as schema 10 wrote them: no nonce (schema 16 added it).
                let subjects = ["ada", "grace", "alan", "edsger"]
                for (index, subject) in subjects.enumerated() {
                    try await provider.context.audit.record(AuditEntry(
                        time: Int64(Date().timeIntervalSince1970 * 1000), type: .identityCreated, outcome: .success, error: nil, actor: .admin,
                        subject: subject, client: nil, address: nil, userAgent: nil, details: nil
                    ), in: provider.context.database)
                    if index == 1 { try await sealer.seal() }
                }
                // The store as schema 10 left it: waiting rows in audit_events, no seq, no nonces.
                try await provider.context.database.transaction { transaction in
                    try await transaction.execute("CREATE INDEX audit_events_waiting ON audit_events (id) WHERE seq IS NULL")
                    try await transaction.execute("""
                        INSERT INTO audit_events (\(raw: AuditLog.columns), mac) SELECT \(raw: AuditLog.columns), mac FROM audit_pending ORDER BY id
                        """)
                    try await transaction.execute("DROP TABLE audit_pending")
                    try await transaction.execute("DROP INDEX audit_events_nonce")
                    try await transaction.execute("ALTER TABLE audit_events DROP COLUMN nonce")
                    // And without what later steps made (12, 13 and 17: the SSH CA's tables; 14:
                    // the device codes' authorization details).
                    for table in ["ssh_certificates", "ssh_key_holders", "ssh_principals", "ssh_client_principals", "ssh_ca_keys"] {
                        try await transaction.execute(SQLStatement(stringLiteral: "DROP TABLE \(table)"))
                    }
                    try await transaction.execute("ALTER TABLE device_codes DROP COLUMN host_login")
                    // 18: the fleet's tables.
                    try await ResourceIndicatorSchema.drop(in: transaction)
                    try await FleetSchema.drop(in: transaction)
                    try await transaction.execute("UPDATE latchkey_schema SET version = 10")
                }
                try await Migrations.run(on: provider.context.database)
                let waiting = try await provider.context.database.read { try await $0.query("SELECT subject FROM audit_pending ORDER BY id") }
                #expect(try waiting.map { try $0.decode("subject", as: String.self) } == Array(subjects.suffix(2)))
                try await sealer.seal()
                let verified = try await provider.context.auditVerifier().verify()
                #expect(verified.intact && verified.checked == 4, "\(verified)")
                let page = try await AuditReader(database: provider.context.database).page(.init())
                #expect(page.events.map(\.subject) == subjects && page.events.map(\.id) == [1, 2, 3, 4])
            }
        }
    }

    @Test("two instances writing and sealing at once on one PostgreSQL database make one chain that verifies, and verifies while they write", arguments: TestStore.available.filter { $0 == .postgres })
    func twoInstances(engine: TestStore) async throws {
        try await engine.with { storage, key in
            var configuration = ProviderConfiguration(adminToken: "t")
            configuration.storage = storage
            configuration.storeKey = key
            try await Provider.closing(configuration) { first in
                try await first.context.prepare()
                try await Provider.closing(configuration) { second in
                    try await second.context.prepare()
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for (index, provider) in [first, second].enumerated() {
                            group.addTask {
                                for round in 0..<20 {
                                    _ = try await provider.administration.createIdentity(username: "user\(index)x\(round)", email: nil, displayName: nil)
                                    if round % 4 == 0 { try await AuditSealer(context: provider.context).seal() }
                                }
                            }
                        }
                        // Verified while both write and seal: what another instance seals
                        // meanwhile is not taken for tampering.
                        group.addTask {
                            for _ in 0..<8 {
                                let verified = try await first.context.auditVerifier().verify()
                                #expect(verified.intact, "\(verified)")
                            }
                        }
                        try await group.waitForAll()
                    }
                    try await AuditSealer(context: second.context).seal()
                    for provider in [first, second] {
                        let verified = try await provider.context.auditVerifier().verify()
                        #expect(verified.intact && verified.checked == 40 && verified.newest == 40, "\(verified)")
                    }
                }
            }
        }
    }

    @Test("latchkey admin events --follow prints an event made after it started")
    func follow() async throws {
        try await ProviderHarness.run { provider in
            _ = try await provider.createIdentity("before")
            let (process, output) = try ChildProcess.start(
                LatchkeyCommand.binary, ["admin", "events", "--idp", provider.issuer.absoluteString, "--follow", "--json"],
                environment: ["LATCHKEY_ADMIN_TOKEN": ProviderHarness.adminToken]
            )
            defer { ChildProcess.stop(process) }
            let (first, transcript) = await ChildProcess.firstLine(of: output, timeout: .seconds(20)) { $0.contains("identity.created") }
            try #require(first != nil, "the follower printed: \(transcript)")
            let (identity, _) = try await provider.createIdentity("after")
            let (line, more) = await ChildProcess.firstLine(of: output, timeout: .seconds(20)) { $0.contains(identity) }
            let event = try AuditEvent.decoded(try #require(line, "nothing new within 20 s: \(more)"))
            #expect(event.type == .identityCreated && event.subject == identity && event.id == 2)
        }
    }

    @Test("with a journal socket (serve --audit-syslog), each sealed event arrives there as structured fields")
    func journalCopy() async throws {
        let scratch = try TemporaryDirectory()
        let path = scratch.url.appendingPathComponent("journal.socket").path
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        try #require(bytes.count < MemoryLayout.size(ofValue: address.sun_path), "\(path) is too long for a socket")
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0, "bind: errno \(errno)")
        var timeout = timeval(tv_sec: 15, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

        try await ProviderHarness.run(nil, { $0.auditJournalSocket = path }) { provider in
            let (identity, _) = try await provider.createIdentity("ada")
            let datagram = await Blocking.run { () -> Data in
                var buffer = [UInt8](repeating: 0, count: 65_536)
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                return count > 0 ? Data(buffer.prefix(count)) : Data()
            }
            let fields = Dictionary(String(decoding: datagram, as: UTF8.self).split(separator: "\n").compactMap { line -> (String, String)? in
                guard let equals = line.firstIndex(of: "=") else { return nil }
                return (String(line[..<equals]), String(line[line.index(after: equals)...]))
            }, uniquingKeysWith: { first, _ in first })
            #expect(fields["SYSLOG_IDENTIFIER"] == "latchkey-audit" && fields["LATCHKEY_AUDIT_ID"] == "1", "\(fields)")
            #expect(fields["LATCHKEY_AUDIT_TYPE"] == "identity.created" && fields["LATCHKEY_AUDIT_SUBJECT"] == identity)
            #expect(fields["LATCHKEY_AUDIT_ACTOR_KIND"] == "admin" && fields["PRIORITY"] == "6" && fields["LATCHKEY_AUDIT_HASH"]?.count == 43)
        }
    }

    @Test("with the log off (serve --no-audit) the provider stays up past a sealing tick, serves sign-ins, and writes no event")
    func logOff() async throws {
        try await ProviderTests.withProvider(.sqlite, { $0.auditLog = false }) { issuer, authenticator in
            try await Task.sleep(for: .milliseconds(1500))
            _ = try await ProviderTests.bind(issuer, authenticator)
            _ = try await ProviderTests.signIn(issuer, authenticator, client: try ProviderTests.client(issuer))
            #expect(try await Self.events(issuer).isEmpty)
            #expect(try await Self.verification(issuer).intact)
        }
    }
}

extension AuditEvent {
    static func decoded(_ line: String) throws -> AuditEvent {
        try JSONDecoder().decode(AuditEvent.self, from: Data(line.utf8))
    }
}
