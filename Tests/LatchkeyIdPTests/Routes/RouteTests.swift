import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import NIOCore
import Testing

/// The routes' own logic, called in-process through Hummingbird's router test framework:
/// no socket, no port, the real application `buildApplication` makes (middleware, store,
/// limits), its log captured. What needs a real connection (slow clients, TLS, several
/// instances, the command line) stays with ``ProviderHarness`` and `latchkey serve`.
@Suite("Provider routes, in-process")
struct RouteTests {
    static let issuer = URL(string: "https://login.example.com")!

    /// The provider for `issuer` over an in-memory store, its router called directly.
    static func withRouter(
        _ configure: @Sendable (inout ProviderConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (any TestClientProtocol, LogCapture) async throws -> Void
    ) async throws {
        let logs = LogCapture()
        var configuration = ProviderConfiguration(issuer: issuer, adminToken: ProviderHarness.adminToken)
        configuration.logHandler = logs.handler
        configure(&configuration)
        let app = try await buildApplication(configuration: configuration)
        try await app.test(.router) { client in try await body(client, logs) }
    }

    static func form(_ request: some FormParameters) -> ByteBuffer {
        ByteBuffer(bytes: FormEncoding.encode(request.formItems))
    }

    static let formHeaders: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]

    static func decode<T: Decodable>(_ type: T.Type, _ response: TestResponse) throws -> T {
        try JSONDecoder().decode(type, from: Data(response.body.readableBytesView))
    }

    @Test("discovery names the issuer and endpoints on its origin, S256 only")
    func discovery() async throws {
        try await Self.withRouter { client, _ in
            let response = try await client.execute(uri: "/" + ProtocolPath.discovery, method: .get)
            #expect(response.status == .ok)
            let metadata = try Self.decode(ProviderMetadata.self, response)
            #expect(metadata.issuer == Self.issuer.absoluteString)
            #expect(metadata.tokenEndpoint.host == Self.issuer.host && metadata.tokenEndpoint.scheme == "https")
            #expect(metadata.codeChallengeMethodsSupported == ["S256"])
            #expect(metadata.authorizationResponseIssParameterSupported == true)
        }
    }

    @Test("an unsupported grant type is refused 400 unsupported_grant_type, no-store, and logged by code")
    func unsupportedGrant() async throws {
        try await Self.withRouter { client, logs in
            let request = TokenRequest(grantType: GrantType(rawValue: "password"), clientID: ProviderConfiguration.cliClient.id)
            let response = try await client.execute(uri: "/token", method: .post, headers: Self.formHeaders, body: Self.form(request))
            #expect(response.status == .badRequest)
            #expect(response.headers[.cacheControl] == "no-store")
            #expect(try Self.decode(OAuthErrorResponse.self, response).error == .unsupportedGrantType)
            let refusals = logs.records("request refused")
            #expect(refusals.map { $0.metadata["error"] } == ["unsupported_grant_type"], "\(logs.text)")
        }
    }

    @Test("an unknown client is refused 401 invalid_client")
    func unknownClient() async throws {
        try await Self.withRouter { client, _ in
            let request = TokenRequest(grantType: .refreshToken, refreshToken: "x", clientID: "nobody")
            let response = try await client.execute(uri: "/token", method: .post, headers: Self.formHeaders, body: Self.form(request))
            #expect(response.status == .unauthorized)
            #expect(try Self.decode(OAuthErrorResponse.self, response).error == .invalidClient)
        }
    }

    @Test("a wrong authorization code is refused invalid_grant; neither the code nor the verifier reaches the log")
    func wrongCodeNotLogged() async throws {
        let code = "code-\(UUID().uuidString)"
        let verifier = "verifier-\(UUID().uuidString)-\(UUID().uuidString)"
        try await Self.withRouter { client, logs in
            let request = TokenRequest(
                grantType: .authorizationCode, code: code, redirectURI: try ProviderHarness.callback.absoluteString,
                codeVerifier: verifier, clientID: ProviderConfiguration.cliClient.id
            )
            let response = try await client.execute(uri: "/token", method: .post, headers: Self.formHeaders, body: Self.form(request))
            #expect(response.status == .badRequest)
            #expect(try Self.decode(OAuthErrorResponse.self, response).error == .invalidGrant)
            #expect(!logs.records("request refused").isEmpty)
            #expect(!logs.text.contains(code) && !logs.text.contains(verifier), "\(logs.text)")
        }
    }

    @Test("userinfo without a token is a 401 whose challenge names the scheme only (RFC 6750 §3.1)")
    func userInfoWithoutToken() async throws {
        try await Self.withRouter { client, _ in
            let response = try await client.execute(uri: "/" + ProtocolPath.userInfo, method: .get)
            #expect(response.status == .unauthorized)
            #expect(response.headers[.wwwAuthenticate] == "Bearer")
        }
    }

    @Test("the admin API refuses a missing or wrong token and answers the right one through its typed endpoint")
    func adminAuthorization() async throws {
        try await Self.withRouter { client, _ in
            let endpoint = AdminAPI.createIdentity
            let body = ByteBuffer(bytes: try JSONEncoder().encode(AdminAPI.IdentityCreation(username: "ada", email: "ada@example.com")))
            let method = try #require(HTTPRequest.Method(endpoint.method))
            let path = "/" + (try #require(endpoint.path()))
            var headers: HTTPFields = [.contentType: ProtocolPath.jsonMediaType]
            #expect(try await client.execute(uri: path, method: method, headers: headers, body: body).status == .unauthorized)
            headers[.authorization] = "Bearer not-the-token"
            #expect(try await client.execute(uri: path, method: method, headers: headers, body: body).status == .unauthorized)
            headers[.authorization] = "Bearer \(ProviderHarness.adminToken)"
            let created = try await client.execute(uri: path, method: method, headers: headers, body: body)
            #expect(created.status == .created)
            let answer = try Self.decode(AdminAPI.IdentityCreated.self, created)
            #expect(answer.identity.username == "ada")
            #expect(URL(string: answer.bindURL)?.host == Self.issuer.host)
        }
    }

    @Test("an unknown path answers 404 as an error object")
    func unknownPath() async throws {
        try await Self.withRouter { client, _ in
            let response = try await client.execute(uri: "/no/such/route", method: .get)
            #expect(response.status == .notFound)
            #expect(response.headers[.contentType] == ProtocolPath.jsonMediaType)
            _ = try Self.decode(OAuthErrorResponse.self, response)
        }
    }

    /// Each kind of refusal the provider's services throw (`ProviderError.Kind`) gets its
    /// status and challenge from the HTTP layer alone (`ProviderError+HTTP.swift`).
    @Test("each kind of refusal answers its status and challenge: invalid_token, a DPoP challenge, 404, 409, 413")
    func refusalKinds() async throws {
        try await Self.withRouter { client, _ in
            let userInfo = "/" + ProtocolPath.userInfo
            let bearer = try await client.execute(uri: userInfo, method: .get, headers: [.authorization: "Bearer made-up"])
            #expect(bearer.status == .unauthorized)
            #expect(bearer.headers[.wwwAuthenticate]?.hasPrefix(#"Bearer error="invalid_token""#) == true, "\(bearer.headers)")

            let dpop = try await client.execute(uri: userInfo, method: .get, headers: [.authorization: "DPoP made-up"])
            #expect(dpop.status == .unauthorized)
            #expect(dpop.headers[.wwwAuthenticate] == #"DPoP error="invalid_token", algs="ES256 EdDSA""#, "\(dpop.headers)")

            var admin: HTTPFields = [.contentType: ProtocolPath.jsonMediaType, .authorization: "Bearer \(ProviderHarness.adminToken)"]
            let missing = try await client.execute(uri: "/" + (try #require(AdminAPI.identity.path("nobody"))), method: .get, headers: admin)
            #expect(missing.status == .notFound)
            #expect(try Self.decode(OAuthErrorResponse.self, missing).error == .notFound)

            let create = try #require(AdminAPI.createIdentity.path())
            let body = ByteBuffer(bytes: try JSONEncoder().encode(AdminAPI.IdentityCreation(username: "ada", email: "ada@example.com")))
            #expect(try await client.execute(uri: "/" + create, method: .post, headers: admin, body: body).status == .created)
            let taken = try await client.execute(uri: "/" + create, method: .post, headers: admin, body: body)
            #expect(taken.status == .conflict)
            #expect(try Self.decode(OAuthErrorResponse.self, taken).error == .conflict)

            admin[.contentLength] = "\(128 * 1024)"
            let large = ByteBuffer(repeating: UInt8(ascii: " "), count: 128 * 1024)
            let tooLarge = try await client.execute(uri: "/" + create, method: .post, headers: admin, body: large)
            #expect(tooLarge.status == .contentTooLarge)
        }
    }
}
