import Foundation
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// Dynamic client registration (RFC 7591) and a registration's management (RFC 7592) at
/// the reference provider, over real HTTP: a client registers as the MCP SDK does, signs a
/// person in (with consent: it is third-party), reads and deletes its registration; every
/// refusal by its code; floods and the cap.
@Suite("Provider: dynamic client registration")
struct DynamicRegistrationTests {
    typealias P = ProviderTests

    static let native: JSONValue = [
        "client_name": "Agent CLI", "redirect_uris": ["http://localhost:3030/callback"], "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"], "token_endpoint_auth_method": "client_secret_post", "application_type": "native",
    ]

    static func register(_ issuer: URL, _ body: JSONValue, token: String? = nil) async throws -> (Int, JSONValue) {
        var headers: [String: String] = [:]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        let response = try await HTTPExchange.json(issuer.appendingPathComponent(ProtocolPath.registration), body, headers: headers)
        return (response.status, response.json)
    }

    static func withProvider(
        _ mode: ClientRegistrationPolicy.Mode = .open, maximumClients: Int = 1000, _ body: @escaping @Sendable (URL, SoftwareAuthenticator) async throws -> Void
    ) async throws {
        try await P.withProvider(.sqlite, { configuration in
            configuration.clientRegistration.mode = mode
            configuration.clientRegistration.maximumClients = maximumClients
            configuration.rateLimitPerMinute = 1000
        }, body)
    }

    @Test("a native client registers as the MCP SDK does (a secret asked for, none given), signs a person in after consent, reads and deletes its registration; its grants end with it")
    func registerSignInDelete() async throws {
        try await Self.withProvider { issuer, authenticator in
            _ = try await P.bind(issuer, authenticator)
            let (_, metadata) = try await P.request("GET", issuer.appendingPathComponent(ProtocolPath.authorizationServerMetadata))
            #expect(metadata["registration_endpoint"]?.stringValue == issuer.appendingPathComponent("register").absoluteString)
            let (status, registered) = try await Self.register(issuer, Self.native)
            #expect(status == 201, "\(registered)")
            #expect(registered["token_endpoint_auth_method"]?.stringValue == "none" && registered["client_secret"] == nil)
            let clientID = try #require(registered["client_id"]?.stringValue)
            let token = try #require(registered["registration_access_token"]?.stringValue)
            let own = try P.url(registered["registration_client_uri"]?.stringValue)

            // Sign in: a third-party client, so the person consents first.
            let client = try OAuthClient(configuration: .init(issuer: issuer, clientID: clientID, redirectURI: try #require(URL(string: "http://localhost:41234/callback"))))
            let authorization = try await client.authorizationRequest(scopes: ["openid"])
            let (_, started) = try await P.request("GET", authorization.url, headers: ["Accept": "application/json"])
            let authenticateURL = try P.url(started["authenticateURL"]?.stringValue)
            let (_, challenge) = try await P.request("GET", authenticateURL)
            let (assertion, _) = try authenticator.getAssertion(try PublicKeyCredentialRequestOptionsJSON(json: challenge.json()), origin: P.origin(issuer))
            let (_, answer) = try await P.request("POST", authenticateURL, json: try assertion.json())
            let consent = try #require(answer["consent"], "\(answer)")
            #expect(consent["clientName"]?.stringValue == "Agent CLI" && consent["redirectHost"]?.stringValue == "localhost")
            let (_, redirect) = try await ConsentTests.decide(consent["submit"]?.stringValue, ticket: consent["ticket"], "approve")
            let code = try await client.authorizationCode(from: try P.url(redirect["redirectURL"]?.stringValue), for: authorization)
            let tokens = try await client.exchange(code: code, for: authorization)

            // RFC 7592: read with the registration token only; delete ends the client and its grants.
            #expect(try await HTTPExchange.send("GET", own, headers: ["Authorization": "Bearer \(token)"]).json["client_name"]?.stringValue == "Agent CLI")
            #expect(try await HTTPExchange.send("GET", own, headers: ["Authorization": "Bearer wrong"]).status == 401)
            #expect(try await HTTPExchange.send("GET", own).status == 401)
            #expect(try await HTTPExchange.send("DELETE", own, headers: ["Authorization": "Bearer wrong"]).status == 401)
            #expect(try await HTTPExchange.send("DELETE", own, headers: ["Authorization": "Bearer \(token)"]).status == 204)
            await #expect(throws: OAuthError.self) { _ = try await client.refresh(tokens) }
            #expect(try await HTTPExchange.send("GET", own, headers: ["Authorization": "Bearer \(token)"]).status == 401)
        }
    }

    @Test("each bad registration is refused with RFC 7591's code", arguments: [
        ("web client with an http redirect", ["redirect_uris": ["http://app.example/cb"]], "invalid_redirect_uri"),
        ("native client redirecting off loopback", ["redirect_uris": ["https://app.example/cb"], "application_type": "native"], "invalid_redirect_uri"),
        ("no redirect URI", ["client_name": "x"], "invalid_redirect_uri"),
        ("a fragment", ["redirect_uris": ["https://app.example/cb#f"]], "invalid_redirect_uri"),
        ("implicit", ["redirect_uris": ["https://app.example/cb"], "response_types": ["token"]], "invalid_client_metadata"),
        ("client credentials", ["redirect_uris": ["https://app.example/cb"], "grant_types": ["client_credentials"]], "invalid_client_metadata"),
        ("its own client_id", ["redirect_uris": ["https://app.example/cb"], "client_id": "admin"], "invalid_client_metadata"),
        ("jwks_uri", ["redirect_uris": ["https://app.example/cb"], "token_endpoint_auth_method": "private_key_jwt", "jwks_uri": "https://169.254.169.254/"], "invalid_client_metadata"),
        ("a name with a bidi override", ["redirect_uris": ["https://app.example/cb"], "client_name": "Latchkey\u{202E}nimda"], "invalid_client_metadata"),
        ("an unknown application type", ["redirect_uris": ["https://app.example/cb"], "application_type": "desktop"], "invalid_client_metadata"),
    ] as [(String, JSONValue, String)])
    func refusals(name: String, body: JSONValue, code: String) async throws {
        try await Self.withProvider { issuer, _ in
            let (status, answer) = try await Self.register(issuer, body)
            #expect(status == 400 && answer["error"]?.stringValue == code, "\(name): \(answer)")
        }
    }

    @Test("a flood: a fourth registration from one address within a minute is 429 slow_down; past the cap of live registrations, 503")
    func flood() async throws {
        try await Self.withProvider(maximumClients: 2) { issuer, _ in
            var statuses: [Int] = []
            for _ in 0..<4 { statuses.append(try await Self.register(issuer, Self.native).0) }
            #expect(statuses == [201, 201, 503, 429], "\(statuses)")
        }
    }

    @Test("with an initial access token: refused without it or with another, taken with it; off: 404 and no registration_endpoint")
    func initialAccessTokenAndOff() async throws {
        let token = String(repeating: "k", count: 40)
        let hash = try DigestAlgorithm.sha256.hash(Data(token.utf8))
        try await Self.withProvider(.initialAccessToken(sha256: hash)) { issuer, _ async throws in
            #expect(try await Self.register(issuer, Self.native).0 == 401)
            #expect(try await Self.register(issuer, Self.native, token: token + "x").0 == 401)
            #expect(try await Self.register(issuer, Self.native, token: token).0 == 201)
        }
        try await Self.withProvider(.off) { issuer, _ async throws in
            #expect(try await Self.register(issuer, Self.native).0 == 404)
            let (_, metadata) = try await P.request("GET", issuer.appendingPathComponent(ProtocolPath.discovery))
            #expect(metadata["registration_endpoint"] == nil)
        }
    }
}
