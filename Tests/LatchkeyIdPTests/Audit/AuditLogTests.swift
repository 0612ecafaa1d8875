import Foundation
import LatchkeyCrypto
import LatchkeyIdP
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
            run = try await ChildProcess.tool(["psql", Self.url(location), "-q", "-v", "ON_ERROR_STOP=1", "-c", sql])
        case .memory:
            throw TestSupportError("a memory store cannot be edited from outside")
        }
        try #require(run.status == 0, "\(sql): \(run.output)")
    }

    static func url(_ location: PostgresLocation) -> String {
        "postgresql://\(location.user):\(location.password ?? "")@\(location.host):\(location.port)/\(location.database)?sslmode=disable"
    }

    /// `latchkey admin events verify` on the store itself: exit status and output.
    static func verifyOffline(_ storage: ProviderConfiguration.Storage, keyFile: URL) async throws -> (Int32, String) {
        var arguments = ["admin", "events", "verify", "--store-key-file", keyFile.path]
        switch storage {
        case .sqlite(let directory): arguments += ["--data-dir", directory.path]
        case .postgres(let location): arguments += ["--database", Self.url(location)]
        case .memory: throw TestSupportError("a memory store cannot be read from outside")
        }
        let run = try await LatchkeyCommand.run(arguments)
        return (run.status, run.stdout + run.stderr)
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
}
