import Foundation
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyWebAuthn
import LatchkeyTestSupport
import Testing
import Logging

/// Two provider instances on one PostgreSQL database, as behind a load balancer
/// (docs/ARCHITECTURE.md, "Several instances"): any instance serves any request, and
/// single-use things are spent once across both.
@Suite("Several provider instances on one PostgreSQL store", .timeLimit(.minutes(5)))
struct MultiInstanceTests {
    /// The issuer both instances claim, as a proxy in front of them would be; the test
    /// sends each request to the instance it chooses.
    static let issuer = URL(string: "http://127.0.0.1:9")!

    /// `url` (on the shared issuer) sent to `instance` instead.
    static func on(_ instance: URL, _ url: URL) throws -> URL {
        var components = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
        components.host = instance.host
        components.port = instance.port
        return try #require(components.url)
    }

    static func form(_ url: URL, _ fields: [String: String]) async throws -> (Int, JSONValue) {
        var components = URLComponents()
        components.queryItems = fields.map { URLQueryItem(name: $0.key, value: $0.value) }
        let body = (components.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        let response = try await HTTP1Transport().send(TransportRequest(
            method: "POST", url: url, headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Data(body.utf8)
        ))
        return (response.status, (try? JSONValue(json: response.body)) ?? [:])
    }

    @Test(
        "one sign-in alternates between two instances and succeeds; a code redeemed on one is refused on the other; a code raced on both is redeemed once, and its tokens revoked",
        .requires(if: TestStore.postgresURL != nil, "LATCHKEY_TEST_POSTGRES_URL is not set")
    )
    func alternatingInstances() async throws {
        let directoryScratch = try TemporaryDirectory()
        let directory = directoryScratch.url.appendingPathComponent("latchkey-multi")
        let device = try ProviderTests.newAuthenticator(directory)
        try await TestStore.postgres.with { storage, storeKey in
            var configuration = ProviderConfiguration(issuer: Self.issuer, adminToken: ProviderTests.adminToken)
            configuration.logLevel = .warning
            configuration.storage = storage
            configuration.storeKey = storeKey
            try await Self.run(configuration, device: device)
        }
    }

    static func run(_ configuration: ProviderConfiguration, device: SoftwareAuthenticator) async throws {
        let origin = ProviderTests.origin(Self.issuer)
        // Each instance listens on a port of its own; both claim the shared issuer.
        try await withInstances(configuration) { first, second in
            // Bind: the admin API on the first, the job's options on the second, the
            // registration on the first.
            let (created, answer) = try await ProviderTests.request(
                "POST", first.appendingPathComponent("admin/identities"),
                json: try JSONSerialization.data(withJSONObject: ["username": "ada", "email": "ada@example.com"]),
                headers: ["Authorization": "Bearer \(ProviderTests.adminToken)"]
            )
            #expect(created == 201)
            let bindURL = try ProviderTests.url(answer["bindURL"])
            let (_, job) = try await ProviderTests.request("GET", try Self.on(second, bindURL))
            let (registration, _) = try device.makeCredential(PublicKeyCredentialCreationOptionsJSON(json: job.json()), origin: origin)
            let (bound, _) = try await ProviderTests.request("POST", try Self.on(first, try ProviderTests.url(job["submit"])), json: try registration.json())
            #expect(bound == 201)

            // Sign in: authorize on the first, options on the second, assertion on the
            // first, token on the second.
            @Sendable func code(_ pkce: PKCE) async throws -> String {
                var components = try #require(URLComponents(url: first.appendingPathComponent("authorize"), resolvingAgainstBaseURL: false))
                components.queryItems = [
                    .init(name: "response_type", value: "code"), .init(name: "client_id", value: "latchkey-cli"),
                    .init(name: "redirect_uri", value: "http://127.0.0.1/callback"), .init(name: "scope", value: "openid"),
                    .init(name: "state", value: "s"), .init(name: "code_challenge", value: pkce.challenge),
                    .init(name: "code_challenge_method", value: "S256"),
                ]
                let (_, started) = try await ProviderTests.request("GET", try #require(components.url), headers: ["Accept": "application/json"])
                let authenticate = try ProviderTests.url(started["authenticateURL"])
                let (_, options) = try await ProviderTests.request("GET", try Self.on(second, authenticate))
                let (assertion, _) = try device.getAssertion(PublicKeyCredentialRequestOptionsJSON(json: options.json()), origin: origin)
                let (status, redirect) = try await ProviderTests.request("POST", try Self.on(first, authenticate), json: try assertion.json())
                #expect(status == 200, "\(redirect)")
                let redirectURL = try ProviderTests.url(redirect["redirectURL"])
                let items = URLComponents(url: redirectURL, resolvingAgainstBaseURL: false)?.queryItems ?? []
                #expect(items.first { $0.name == "iss" }?.value == Self.issuer.absoluteString)
                return try #require(items.first { $0.name == "code" }?.value)
            }
            let pkce = try PKCE.generate()
            let firstCode = try await code(pkce)
            let exchange = ["grant_type": "authorization_code", "code": firstCode, "client_id": "latchkey-cli",
                            "redirect_uri": "http://127.0.0.1/callback", "code_verifier": pkce.verifier]
            let (issued, tokens) = try await Self.form(second.appendingPathComponent("token"), exchange)
            #expect(issued == 200, "\(tokens)")
            let accessToken = try #require(tokens["access_token"]?.stringValue)
            // The token works on the other instance; the code does not, there or here.
            let (info, _) = try await ProviderTests.request("GET", first.appendingPathComponent("userinfo"), headers: ["Authorization": "Bearer \(accessToken)"])
            #expect(info == 200)
            let (replayed, refusal) = try await Self.form(first.appendingPathComponent("token"), exchange)
            #expect(replayed == 400 && refusal["error"]?.stringValue == "invalid_grant")
            // The replay revoked what the code issued, on both instances.
            let (revoked, _) = try await ProviderTests.request("GET", second.appendingPathComponent("userinfo"), headers: ["Authorization": "Bearer \(accessToken)"])
            #expect(revoked == 401)

            // One fresh code sent to both instances at once: exactly one redeems it.
            let racedPKCE = try PKCE.generate()
            let raced = try await code(racedPKCE)
            var racedExchange = exchange
            racedExchange["code"] = raced
            racedExchange["code_verifier"] = racedPKCE.verifier
            async let onFirst = Self.form(first.appendingPathComponent("token"), racedExchange)
            async let onSecond = Self.form(second.appendingPathComponent("token"), racedExchange)
            let answers = try await [onFirst, onSecond]
            #expect(answers.map(\.0).sorted() == [200, 400])
            // The loser presented a code already redeemed: what the winner got is revoked
            // (RFC 6749 §4.1.2), whichever instance read the code first.
            if let winner = answers.first(where: { $0.0 == 200 })?.1["access_token"]?.stringValue {
                let (status, _) = try await ProviderTests.request("GET", first.appendingPathComponent("userinfo"), headers: ["Authorization": "Bearer \(winner)"])
                #expect(status == 401, "the raced code's tokens are revoked")
            }
        }
    }

    /// Runs two instances of `configuration` and gives `body` their listening addresses.
    static func withInstances(_ configuration: ProviderConfiguration, _ body: @escaping @Sendable (URL, URL) async throws -> Void) async throws {
        try await Self.withListening(configuration) { first in
            try await Self.withListening(configuration) { second in
                try await body(first, second)
            }
        }
    }

    /// One instance; `body` gets `http://127.0.0.1:<its port>`.
    static func withListening(_ configuration: ProviderConfiguration, _ body: @escaping @Sendable (URL) async throws -> Void) async throws {
        // The issuer is fixed, so the listener's port comes from a port of our choosing.
        var configuration = configuration
        configuration.port = try freePort()
        let port = configuration.port
        try await withReferenceProvider(configuration: configuration) { _ in
            try await body(try #require(URL(string: "http://127.0.0.1:\(port)")))
        }
    }

    /// A free loopback port (``LoopbackPort/free()``).
    static func freePort() throws -> Int {
        try LoopbackPort.free()
    }
}
