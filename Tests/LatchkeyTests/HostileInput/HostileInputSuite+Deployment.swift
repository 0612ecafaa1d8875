import Foundation
import Logging
import Latchkey
import LatchkeyCrypto
@testable import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyTestSupport
import Testing

/// The provider as operators deploy it (docs/SECURITY.md, "Trusted proxies", "Mail",
/// "Logs", "Loopback"): behind a proxy, with a mail relay, logging as text. Each test
/// is an attack an independent red team made work against an earlier version.
extension HostileInputSuite {
    // MARK: Forwarded headers

    /// Statuses of `count` admin requests with a wrong token through a "proxy" on
    /// 127.0.0.1 that names the client `203.0.113.9` in `proxyHeader`, while the client
    /// adds its own `clientHeader` naming a new address each time.
    static func adminStatusesBehindProxy(_ provider: ProviderHarness, proxyHeader: String, proxyValue: String, clientHeader: String, clientValue: @escaping (Int) -> String, count: Int = 14) async throws -> [Int] {
        var statuses: [Int] = []
        for index in 0..<count {
            let (status, _) = try await RawConnection.open(port: provider.port).exchange(
                "GET", "/admin/outbox", headers: ["Authorization": "Bearer wrong-\(index)", proxyHeader: proxyValue, clientHeader: clientValue(index)]
            )
            statuses.append(status)
        }
        return statuses
    }

    @Test("behind a proxy that writes one forwarding header, a client's own other header buys no new bucket: wrong admin tokens reach 429", arguments: [
        (ForwardedHeader.xForwardedFor, "203.0.113.9", "Forwarded", "for=198.51.100."),
        (ForwardedHeader.forwarded, "for=203.0.113.9", "X-Forwarded-For", "198.51.100."),
    ])
    func clientForwardingHeaderIgnored(header: ForwardedHeader, proxyValue: String, clientHeader: String, clientPrefix: String) async throws {
        try await ProviderHarness.withVault({
            $0.trustedProxies = IPNetwork("127.0.0.1/32").map { [$0] } ?? []
            $0.forwardedHeader = header
        }) { provider, _ in
            let statuses = try await Self.adminStatusesBehindProxy(
                provider, proxyHeader: header.fieldName, proxyValue: proxyValue, clientHeader: clientHeader, clientValue: { clientPrefix + "\($0 + 1)" }
            )
            #expect(statuses == Array(repeating: 401, count: 10) + Array(repeating: 429, count: 4), "\(statuses)")
        }
    }

    @Test("recovery starts behind the README's proxy are counted per real client, whatever Forwarded the client sends")
    func recoveryStartsBehindProxy() async throws {
        try await ProviderHarness.withVault({
            $0.trustedProxies = IPNetwork("127.0.0.1/32").map { [$0] } ?? []
            $0.maximumEnrollmentStartsPerAddress = 3
        }) { provider, _ in
            var statuses: [Int] = []
            for index in 0..<5 {
                let (status, _) = try await RawConnection.open(port: provider.port).exchange(
                    "POST", "/v1/recovery", json: ["username": "nobody\(index)"],
                    headers: ["X-Forwarded-For": "198.51.100.\(index), 203.0.113.9", "Forwarded": "for=192.0.2.\(index)"]
                )
                statuses.append(status)
            }
            #expect(statuses == [200, 200, 200, 429, 429], "\(statuses)")
        }
    }

    // MARK: Several instances

    /// Found in testing, milestone 3: one of two instances started at once on a fresh
    /// PostgreSQL database died with "relation identities already exists" (the migration
    /// lock was taken inside a SERIALIZABLE transaction whose snapshot predated it).
    @Test("four instances started together on a fresh PostgreSQL database all come up and agree on the schema and secrets, round after round",
          .requires(if: TestStore.postgresURL != nil, "LATCHKEY_TEST_POSTGRES_URL is not set"))
    func instancesStartTogether() async throws {
        for round in 0..<4 {
            try await TestStore.postgres.with { storage, key in
                var configuration = ProviderConfiguration(adminToken: ProviderHarness.adminToken)
                configuration.storage = storage
                configuration.storeKey = key
                configuration.issuer = URL(string: "http://127.0.0.1:9")
                let settings = configuration
                let logger = Logger(label: "instances-start-together")
                let outcomes = await withTaskGroup(of: Result<ProviderContext, any Error>.self) { group in
                    for _ in 0..<4 {
                        group.addTask {
                            do {
                                let opened = try await ProviderStore.open(settings, logger: logger)
                                let context = ProviderContext(configuration: settings, database: opened.database, storeKey: opened.storeKey, logger: logger)
                                do {
                                    try await context.prepare()
                                } catch {
                                    await context.database.close()
                                    throw error
                                }
                                return .success(context)
                            } catch {
                                return .failure(error)
                            }
                        }
                    }
                    var all: [Result<ProviderContext, any Error>] = []
                    for await outcome in group { all.append(outcome) }
                    return all
                }
                let contexts = outcomes.compactMap { try? $0.get() }
                for case .failure(let error) in outcomes {
                    Issue.record("round \(round): an instance did not come up: \(error)")
                }
                if let first = contexts.first {
                    let (versions, keys, secrets) = try await first.database.read { transaction in
                        (try await transaction.query("SELECT version FROM latchkey_schema").map { try $0.decode("version", as: Int64.self) },
                         try await transaction.first("SELECT count(*) AS keys FROM signing_keys")?.decode("keys", as: Int64.self),
                         try await transaction.first("SELECT count(*) AS secrets FROM provider_secrets")?.decode("secrets", as: Int64.self))
                    }
                    #expect(versions == [Int64(Migrations.currentVersion)], "round \(round): \(versions)")
                    #expect(keys == 1 && secrets == 5, "round \(round): one signing key and one of each secret, not one per instance")
                    let tickets = try contexts.map { try $0.tickets.seal(["probe"], purpose: "probe") }
                    #expect(tickets.allSatisfy { ticket in contexts.allSatisfy { (try? $0.tickets.open([String].self, from: ticket, purpose: "probe")) == ["probe"] } },
                            "round \(round): every instance opens every other's tickets")
                }
                for context in contexts { await context.database.close() }
            }
        }
    }

    // MARK: Mail

    @Test("a relay answering 450 to strangers' sign-up addresses never makes recovery or sign-up refuse anyone",
          .requires("python3 with aiosmtpd not found: skipped") { await SMTPSink.available })
    func relayRefusingRecipients() async throws {
        let sink = try await SMTPSink(deferring: "unverified.example")
        try await ProviderHarness.withVault({
            $0.selfRegistration = true
            $0.mail = .init(transport: .smtp(url: "smtp://127.0.0.1:\(sink.port)", password: nil, trustedCertificatesFile: nil), from: MailTests.sender)
        }) { provider, _ in
            _ = try await provider.createIdentity("ada")
            // Anonymous sign-ups to addresses the relay defers, until it has deferred more
            // than three deliveries in a row.
            for index in 0..<4 {
                let (status, started) = try await provider.post("v1/signup", ["username": "stranger\(index)"])
                try #require(status == 200, "\(started)")
                let submit = try #require((started["step"])?["submit"]?.stringValue)
                let (profiled, answer) = try await provider.post(try #require(URL(string: submit)), ["givenName": "S", "email": "s\(index)@unverified.example"])
                #expect(profiled == 200, "\(answer)")
            }
            let deadline = Date().addingTimeInterval(20)
            while sink.deferredRecipients() < 4, Date() < deadline { try await Task.sleep(for: .milliseconds(100)) }
            #expect(sink.deferredRecipients() >= 4, "the relay deferred the strangers' recipients")
            // Then the real users: a recovery and a sign-up are answered, and their codes arrive.
            #expect(try await provider.post("v1/recovery", ["username": "ada"]).0 == 200)
            #expect(try await provider.post("v1/signup", ["username": "grace"]).0 == 200)
            _ = try await sink.message(to: "ada@example.com")
            let (_, text, _) = try await OperationsTests.get(provider.issuer.appendingPathComponent("metrics"), token: ProviderHarness.adminToken)
            #expect(try OperationsTests.parsePrometheus(text)["latchkey_mail_transport_failing"] == 0, "refused recipients say nothing of the transport")
        }
    }

    // MARK: Enumeration by timing

    /// The Mann-Whitney rank-sum statistic of `a` against `b` as a z score (ties ranked
    /// by their mean): near 0 when neither sample tends to be larger.
    static func rankSumZ(_ a: [Double], _ b: [Double]) -> Double {
        let all = (a.map { ($0, true) } + b.map { ($0, false) }).sorted { $0.0 < $1.0 }
        var ranks = [Double](repeating: 0, count: all.count)
        var start = 0
        while start < all.count {
            var end = start
            while end + 1 < all.count, all[end + 1].0 == all[start].0 { end += 1 }
            for index in start...end { ranks[index] = Double(start + end) / 2 + 1 }
            start = end + 1
        }
        let n1 = Double(a.count), n2 = Double(b.count)
        let rankSum = zip(all, ranks).filter { $0.0.1 }.map(\.1).reduce(0, +)
        let u = rankSum - n1 * (n1 + 1) / 2
        return (u - n1 * n2 / 2) / ((n1 * n2 * (n1 + n2 + 1) / 12).squareRoot())
    }

    /// Up to three rounds, each of `pairs` interleaved pairs in random order after
    /// `warmUp` unmeasured ones: `send(round, index, first)` makes one request of the first
    /// kind or the second, timed, and must answer 200. Returns each round's rank-sum z of
    /// the first kind against the second, stopping at the first round under 3 (the
    /// machine's noise can push one round past |z| 3 by chance, a real difference every
    /// round); `prepare(round)` runs before each.
    static func timingRounds(
        pairs: Int = 300, warmUp: Int = 20, prepare: (Int) async throws -> Void = { _ in },
        _ send: (Int, Int, Bool) async throws -> Int
    ) async throws -> [Double] {
        var scores: [Double] = []
        for round in 0..<3 {
            try await prepare(round)
            var first: [Double] = []
            var second: [Double] = []
            for index in 0..<(pairs + warmUp) {
                for isFirst in [true, false].shuffled() {
                    let start = ContinuousClock.now
                    let status = try await send(round, index, isFirst)
                    let elapsed = ContinuousClock.now - start
                    try #require(status == 200)
                    guard index >= warmUp else { continue }
                    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                    if isFirst { first.append(seconds) } else { second.append(seconds) }
                }
            }
            let z = Self.rankSumZ(first, second)
            scores.append(z)
            if abs(z) < 3 { break }
        }
        return scores
    }

    @Test("the first recovery start for a real account cannot be told from one for an unknown name by its timing (rank-sum |z| < 3)")
    func recoveryTiming() async throws {
        let data = try TemporaryDirectory()
        try await ProviderHarness.withVault({
            $0.storage = .sqlite(directory: data.url.appendingPathComponent("store"))
            $0.maximumEnrollmentStartsPerAddress = 1_000_000
            $0.rateLimitPerMinute = 1_000_000
        }) { provider, _ in
            // Each real account's first start is the one that stores and mails a code, so
            // every sample uses a fresh account (and a fresh unknown name), over one
            // keep-alive connection, as an attacker would use to keep noise down.
            let transport = HTTP1Transport()
            let url = provider.issuer.appendingPathComponent("v1/recovery")
            let scores = try await Self.timingRounds(prepare: { round in
                for index in 0..<320 {
                    _ = try await provider.createIdentity("real-\(round)-\(index)", email: "r\(round)-\(index)@example.com")
                }
            }) { round, index, isReal in
                let name = isReal ? "real-\(round)-\(index)" : "ghost-\(round)-\(index)"
                return try await transport.send(TransportRequest(
                    method: "POST", url: url, headers: ["Content-Type": "application/json"], body: Data(#"{"username":"\#(name)"}"#.utf8)
                )).status
            }
            #expect(scores.contains { abs($0) < 3 }, "rank-sum z of real against unknown names, by round: \(scores)")
            print("recovery timing: rank-sum z by round \(scores.map { String(format: "%.2f", $0) })")
        }
    }

    // MARK: The limiter and the router

    @Test("after /token answers 429, /token/, //token and /token// are refused too; //v1/authenticate/x likewise")
    func limiterPathVariants() async throws {
        try await ProviderHarness.withVault({ $0.rateLimitPerMinute = 3 }) { provider, _ in
            func status(_ target: String) async throws -> Int {
                try await RawConnection.open(port: provider.port).exchange("POST", target, json: ["x": "y"]).status
            }
            var first: [Int] = []
            for _ in 0..<4 { first.append(try await status("/token")) }
            #expect(!first.prefix(3).contains(429) && first.last == 429, "\(first)")
            for variant in ["/token/", "//token", "/token//", "//token//"] {
                #expect(try await status(variant) == 429, "\(variant) must share /token's bucket")
            }
            var authenticate: [Int] = []
            for _ in 0..<3 { authenticate.append(try await status("/v1/authenticate/x")) }
            #expect(!authenticate.contains(429), "\(authenticate)")
            for variant in ["//v1/authenticate/x", "/v1//authenticate/x", "/v1/authenticate//x/"] {
                #expect(try await status(variant) == 429, "\(variant) must share /v1/authenticate's bucket")
            }
        }
    }

    // MARK: Logs

    @Test("a client_id holding a newline, a forged log line and an OSC escape forges nothing in serve's text log")
    func logForging() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary.path), "latchkey is built with the tests")
        let (server, output) = try ChildProcess.start(
            CommandLineTests.binary, ["serve", "--port", "0", "--json"], environment: ["LATCHKEY_ADMIN_TOKEN": CommandLineTests.adminToken], mergingErrors: true
        )
        defer { ChildProcess.stop(server) }
        let (ready, transcript) = await ChildProcess.firstLine(of: output) { $0.contains("\"issuer\"") }
        let line = try #require(ready, "serve did not start: \(transcript)")
        struct Ready: Decodable { var issuer: String }
        let issuer = try #require(URL(string: try JSONDecoder().decode(Ready.self, from: Data(line.utf8)).issuer))
        let forged = "2026-01-01T00:00:00Z info latchkey-idp: admin token accepted"
        let clientID = "x\n\(forged)\u{1B}]0;pwned\u{07}\r\u{202E}"
        var form = URLComponents()
        form.queryItems = [.init(name: "grant_type", value: "authorization_code"), .init(name: "code", value: "c"), .init(name: "client_id", value: clientID)]
        let response = try await HTTP1Transport().send(TransportRequest(
            method: "POST", url: issuer.appendingPathComponent("token"),
            headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Data((form.percentEncodedQuery ?? "").utf8)
        ))
        #expect(response.status == 401 || response.status == 400)
        // The request's log line, and whatever came with it.
        let (logged, log) = await ChildProcess.firstLine(of: output) { $0.contains("token request") }
        #expect(logged != nil, "the request was logged: \(log)")
        for logged in log.split(separator: "\n") {
            #expect(!logged.hasPrefix(forged), "a forged line: \(logged)")
        }
        #expect(!log.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\r" || $0 == "\u{202E}" }, "raw control characters reached the log")
        #expect(log.contains(#"x\n2026-01-01T00:00:00Z"#) && log.contains(#"\u{1B}]0;pwned\u{7}"#), "the value is escaped, not dropped: \(log)")
    }

    // MARK: Loopback

    @Test("loopback is an address in 127/8, ::1 or localhost, never a name that starts with 127.", arguments: [
        ("127.0.0.1", true), ("127.255.3.4", true), ("::1", true), ("[::1]", true), ("0:0:0:0:0:0:0:1", true), ("localhost", true), ("LOCALHOST", true),
        ("127.attacker.example", false), ("127.0.0.1.nip.io", false), ("127.1", false), ("localhost.example", false), ("foo.localhost", false),
        ("128.0.0.1", false), ("::2", false), ("", false), ("0x7f.0.0.1", false), ("127.0.0.01", false),
    ])
    func loopbackByParsing(host: String, loopback: Bool) {
        #expect(LoopbackHost.contains(host) == loopback, "\(host)")
    }

    @Test("serve refuses --issuer http://127.attacker.example and http://127.0.0.1.nip.io; the SMTP transport refuses to speak in clear to a relay named 127.…")
    func loopbackLookAlikes() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary.path), "latchkey is built with the tests")
        for issuer in ["http://127.attacker.example:8080", "http://127.0.0.1.nip.io"] {
            let refusal = try await Self.serveRefusal(["--issuer", issuer], environment: ["LATCHKEY_ADMIN_TOKEN": CommandLineTests.adminToken])
            #expect(refusal.map { $0.status != 0 && $0.output.contains("must be https") } == true, "\(issuer): \(String(describing: refusal))")
        }
        // A relay named 127.… is not on this host: the transport wants TLS before it
        // sends a code or the password to it (the name does not resolve here, so the
        // check is the transport's own decision).
        for relay in ["127.0.0.1.nip.io", "127.attacker.example"] {
            #expect(try !SMTPTransport.Settings(url: "smtp://latchkey@\(relay):25", password: "p").isLoopback, "\(relay)")
        }
        #expect(try SMTPTransport.Settings(url: "smtp://127.0.0.1:25", password: nil).isLoopback)
        #expect(try SMTPTransport.Settings(url: "smtp://[::1]:25", password: nil).isLoopback)
    }
}
