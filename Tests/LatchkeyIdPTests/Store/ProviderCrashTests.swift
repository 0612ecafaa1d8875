import Foundation
import LatchkeyCrypto
@testable import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyWebAuthn
import Logging
import LatchkeyTestSupport
import Testing

/// `latchkey serve` on SQLite, SIGKILLed again and again while clients bind credentials
/// and sign in (docs/ARCHITECTURE.md, "The store": an answer is sent only once its
/// transaction is durable). Every bind the provider acknowledged must still sign in
/// afterwards, and every signature counter it acknowledged must still be in the store,
/// so that assertion could never be accepted again.
///
/// Twice: SIGKILL alone (the kernel still writes out what the server wrote), and a
/// simulated power cut (``PowerCut``: the database and its WAL rolled back to their last
/// sync, as if the page cache were lost with the power), which is what shows that the
/// group commit answers no request before the sync that holds it.
@Suite("Provider crash safety", .serialized, .timeLimit(.minutes(5)))
struct ProviderCrashTests {
    static let rounds = 22
    static let clients = 4
    static let adminToken = ProviderTests.adminToken

    /// What the clients saw acknowledged.
    actor Acknowledged {
        /// Credential id (base64url) → which client's vault holds it and the highest
        /// counter the provider accepted.
        var credentials: [String: (client: Int, counter: UInt32)] = [:]
        var binds = 0
        var signIns = 0

        func bound(_ id: String, client: Int) {
            credentials[id] = (client, 0)
            binds += 1
        }

        func signedIn(_ id: String, counter: UInt32) {
            if let known = credentials[id] { credentials[id] = (known.client, max(known.counter, counter)) }
            signIns += 1
        }
    }

    enum Crash: String, CustomTestStringConvertible, CaseIterable {
        case sigkill = "SIGKILLed"
        case powerCut = "power cut (SIGKILL, then every unsynced write of the database undone)"
        var testDescription: String { rawValue }
    }

    @Test("20+ crashes during concurrent binds and sign-ins: every acknowledged bind signs in, no acknowledged counter is lost", arguments: Crash.allCases)
    func crashes(_ crash: Crash) async throws {
        let binary = LatchkeyServe.binary
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "latchkey is built with the tests")
        let scratchScratch = try TemporaryDirectory()
        let scratch = scratchScratch.url.appendingPathComponent("latchkey-crash")
        let dataDirectory = scratch.appendingPathComponent("data")
        let devices = try (0..<Self.clients).map { try ProviderTests.newAuthenticator(scratch.appendingPathComponent("device\($0)")) }
        // One port for every run, so the issuer (and the credentials' origin) stays put.
        let port = try MultiInstanceTests.freePort()
        let issuer = try #require(URL(string: "http://127.0.0.1:\(port)"))
        let acknowledged = Acknowledged()
        var kills = 0
        let database = dataDirectory.appendingPathComponent(StoreFiles.databaseName)
        let powerCut = crash == .powerCut ? try await PowerCut(files: [database, URL(fileURLWithPath: database.path + "-wal")]) : nil
        // Rounds whose cut undid writes: a power cut that never caught the server between a
        // write and its sync would show nothing.
        var cutsThatUndid = 0

        // At least `rounds` kills; on a loaded machine, where a round may end before much
        // got through, more rounds (up to three times as many) until the work is enough to
        // show anything.
        var round = 0
        while true {
            let (binds, signIns) = (await acknowledged.binds, await acknowledged.signIns)
            let showsNothing = binds < 20 || signIns < 20 || (powerCut != nil && cutsThatUndid == 0)
            guard round < Self.rounds || (round < Self.rounds * 3 && showsNothing) else { break }
            defer { round += 1 }
            let thisRound = round
            let server = try await Self.start(binary, dataDirectory: dataDirectory, port: port, environment: powerCut?.environment ?? [:])
            // Clients bind and sign in until the server dies under them.
            let work = Task {
                await withTaskGroup(of: Void.self) { group in
                    for client in 0..<Self.clients {
                        group.addTask {
                            var step = 0
                            while !Task.isCancelled {
                                step += 1
                                do {
                                    try await Self.step(client: client, device: devices[client], name: "r\(thisRound)c\(client)s\(step)", issuer: issuer, acknowledged: acknowledged)
                                } catch {
                                    return
                                }
                            }
                        }
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 150...700)))
            server.send(SIGKILL)
            _ = await ChildProcess.waitForExit(server)
            kills += 1
            if let powerCut, try powerCut.restore().writes > 0 { cutsThatUndid += 1 }
            work.cancel()
            await work.value
        }

        // Everything acknowledged must be there: the same directory and port, in-process,
        // with the per-address rate limit out of the way of this many sign-ins.
        let credentials = await acknowledged.credentials
        let binds = await acknowledged.binds
        let signIns = await acknowledged.signIns
        print("Provider crash test (\(crash)): \(kills) kills, \(cutsThatUndid) of them undoing unsynced writes; \(binds) binds and \(signIns) sign-ins acknowledged")
        #expect(kills >= 20)
        if powerCut != nil { #expect(cutsThatUndid > 0, "no cut caught the server between a write and its sync") }
        #expect(binds >= 20, "too few binds got through to show anything")
        #expect(signIns >= 20, "too few sign-ins got through to show anything")
        var configuration = ProviderConfiguration(port: port, adminToken: Self.adminToken)
        configuration.dataDirectory = dataDirectory
        configuration.rateLimitPerMinute = 1_000_000
        configuration.logLevel = .warning
        try await withReferenceProvider(configuration: configuration) { issuer in
            for (id, known) in credentials {
                let counter = try await Self.signIn(device: devices[known.client], credentialID: try Base64URL.decode(id), issuer: issuer)
                #expect(counter > known.counter, "credential \(id.prefix(8)): acknowledged \(known.counter), signed now with \(counter)")
            }
        }

        // The store holds every acknowledged counter (so no older assertion passes).
        let provider = try await Provider.open(configuration)
        for (id, known) in credentials {
            let stored = try await provider.context.database.transaction { transaction in
                try await provider.credentials.credential(try Base64URL.decode(id), in: transaction)
            }
            #expect(stored != nil, "acknowledged credential \(id.prefix(8)) is gone")
            #expect((stored?.record.signCount ?? 0) >= known.counter)
        }
        await provider.context.database.close()
    }

    /// One client step: a new identity and credential now and then, else a sign-in with
    /// one of this client's credentials.
    static func step(client: Int, device: SoftwareAuthenticator, name: String, issuer: URL, acknowledged: Acknowledged) async throws {
        let mine = await acknowledged.credentials.filter { $0.value.client == client }.map(\.key)
        if mine.isEmpty || Int.random(in: 0..<3) == 0 {
            let (created, answer) = try await ProviderTests.request(
                "POST", issuer.appendingPathComponent("admin/identities"),
                json: try JSONSerialization.data(withJSONObject: ["username": name]), headers: ["Authorization": "Bearer \(adminToken)"]
            )
            guard created == 201 else { throw CrashStepFailed() }
            let (_, job) = try await ProviderTests.request("GET", try ProviderTests.url(answer["bindURL"]))
            let (registration, credential) = try device.makeCredential(
                PublicKeyCredentialCreationOptionsJSON(json: job.json()), origin: ProviderTests.origin(issuer)
            )
            let (bound, _) = try await ProviderTests.request("POST", try ProviderTests.url(job["submit"]), json: try registration.json())
            guard bound == 201 else { throw CrashStepFailed() }
            await acknowledged.bound(Base64URL.encode(credential.metadata.credentialID.data), client: client)
        } else if let id = mine.randomElement() {
            let counter = try await signIn(device: device, credentialID: try Base64URL.decode(id), issuer: issuer)
            await acknowledged.signedIn(id, counter: counter)
        }
    }

    /// Authorize, options, assertion by `credentialID`: the counter the provider accepted.
    static func signIn(device: SoftwareAuthenticator, credentialID: Data, issuer: URL) async throws -> UInt32 {
        var components = try #require(URLComponents(url: issuer.appendingPathComponent("authorize"), resolvingAgainstBaseURL: false))
        components.queryItems = [
            .init(name: "response_type", value: "code"), .init(name: "client_id", value: "latchkey-cli"),
            .init(name: "redirect_uri", value: "http://127.0.0.1/callback"), .init(name: "scope", value: "openid"),
            .init(name: "code_challenge", value: try PKCE.generate().challenge), .init(name: "code_challenge_method", value: "S256"),
        ]
        let (_, started) = try await ProviderTests.request("GET", try #require(components.url), headers: ["Accept": "application/json"])
        let authenticate = try ProviderTests.url(started["authenticateURL"])
        let (_, options) = try await ProviderTests.request("GET", authenticate)
        let (assertion, _) = try device.getAssertion(
            PublicKeyCredentialRequestOptionsJSON(json: options.json()), origin: ProviderTests.origin(issuer),
            credentialID: credentialID
        )
        let (status, answer) = try await ProviderTests.request("POST", authenticate, json: try assertion.json())
        guard status == 200 else { throw CrashStepFailed(reason: "sign-in answered \(status): \(answer)") }
        return try AuthenticatorData(bytes: assertion.response.authenticatorData.data).signCount
    }

    struct CrashStepFailed: Error {
        var reason = ""
    }

    /// Starts `latchkey serve` on `port` and waits until it listens.
    static func start(_ binary: URL, dataDirectory: URL, port: Int, environment: [String: String]) async throws -> SpawnedProcess {
        try await LatchkeyServe.start(
            ["--port", "\(port)", "--data-dir", dataDirectory.path], environment: environment.merging(["LATCHKEY_ADMIN_TOKEN": adminToken]) { $1 }
        ).0
    }
}
