import Foundation
import Hummingbird
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Synchronization
import Testing

/// Clients known by a URL (draft-ietf-oauth-client-id-metadata-document-03): a document
/// served on loopback signs a person in; every document, URL and fetch the provider must
/// refuse is refused with its reason, the server-side request forgery ones first.
@Suite("Provider: client ID metadata documents")
struct ClientMetadataDocumentTests {
    typealias P = ProviderTests
    static let redirectURI = "http://127.0.0.1/callback"

    /// Documents on a loopback server: `good.json` (cached for an hour), `fresh.json`
    /// (`no-store`), and one for each refusal; the number of requests each path got.
    static func withDocuments(_ body: @escaping @Sendable (URL, @escaping @Sendable (String) -> Int) async throws -> Void) async throws {
        let hits = Mutex<[String: Int]>([:])
        let router = Router()
        @Sendable func document(_ request: Request, _ members: [String: JSONValue], cacheControl: String? = "max-age=3600") throws -> Response {
            var headers: HTTPFields = [.contentType: "application/json"]
            if let cacheControl { headers[.cacheControl] = cacheControl }
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: try JSONValue.object(members).json())))
        }
        @Sendable func own(_ request: Request) -> String { "http://\(request.head.authority ?? "")\(request.uri.path)" }
        @Sendable func count(_ request: Request) { hits.withLock { $0[request.uri.path, default: 0] += 1 } }
        let good: @Sendable (Request) -> [String: JSONValue] = { request in
            ["client_id": .string(own(request)), "client_name": "Research agent", "redirect_uris": [.string(redirectURI)],
             "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"], "token_endpoint_auth_method": "none"]
        }
        router.get("good.json") { request, _ in count(request); return try document(request, good(request)) }
        router.get("fresh.json") { request, _ in count(request); return try document(request, good(request), cacheControl: "no-store") }
        router.get("mismatch.json") { request, _ in
            count(request)
            var members = good(request)
            members["client_id"] = "https://elsewhere.example/client.json"
            return try document(request, members)
        }
        router.get("secret.json") { request, _ in
            var members = good(request)
            members["token_endpoint_auth_method"] = "client_secret_basic"
            return try document(request, members)
        }
        router.get("implicit.json") { request, _ in
            var members = good(request)
            members["response_types"] = ["token"]
            return try document(request, members)
        }
        router.get("big.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(repeating: UInt8(ascii: " "), count: 3 << 20)))
        }
        router.get("slow.json") { request, _ in
            try await Task.sleep(for: .seconds(4))
            return try document(request, good(request))
        }
        router.get("redirect.json") { _, _ in
            Response(status: .found, headers: [.location: "http://169.254.169.254/latest/meta-data/"])
        }
        router.get("missing.json") { _, _ in Response(status: .notFound) }
        try await LiveServer.run(router, label: "client-documents") { base in
            try await body(base) { path in hits.withLock { $0["/" + path] ?? 0 } }
        }
    }

    static func provider(localNetwork: Bool = true, enabled: Bool = true, _ body: @escaping @Sendable (URL, SoftwareAuthenticator) async throws -> Void) async throws {
        try await P.withProvider(.sqlite, { configuration in
            configuration.clientMetadataDocuments.enabled = enabled
            configuration.clientMetadataDocuments.localNetwork = localNetwork
            configuration.clientMetadataDocuments.timeout = 1
        }, body)
    }

    /// `/authorize` for `clientID` as JSON: status and answer.
    static func authorize(_ issuer: URL, clientID: String, redirectURI: String = redirectURI) async throws -> (Int, JSONValue, AuthorizationRequest) {
        let client = try OAuthClient(configuration: .init(issuer: issuer, clientID: clientID, redirectURI: try #require(URL(string: redirectURI))))
        let authorization = try await client.authorizationRequest(scopes: ["openid"])
        let (status, answer) = try await P.request("GET", authorization.url, headers: ["Accept": "application/json"])
        return (status, answer, authorization)
    }

    @Test("an agent known by its metadata document signs a person in with a passkey and redeems the code as a public client; discovery says documents are taken; the document is fetched once while cached, each time when no-store")
    func signsIn() async throws {
        try await Self.withDocuments { documents, hits in
            try await Self.provider { issuer, authenticator in
                _ = try await P.bind(issuer, authenticator)
                let (_, metadata) = try await P.request("GET", issuer.appendingPathComponent(ProtocolPath.authorizationServerMetadata))
                #expect(metadata["client_id_metadata_document_supported"]?.boolValue == true)
                let clientID = documents.appendingPathComponent("good.json").absoluteString
                let (status, started, authorization) = try await Self.authorize(issuer, clientID: clientID)
                #expect(status == 200, "\(started)")
                let authenticateURL = try P.url(started["authenticateURL"]?.stringValue)
                let (_, challenge) = try await P.request("GET", authenticateURL)
                let options = try PublicKeyCredentialRequestOptionsJSON(json: challenge.json())
                let (assertion, _) = try authenticator.getAssertion(options, origin: P.origin(issuer))
                let (_, answer) = try await P.request("POST", authenticateURL, json: try assertion.json())
                // A third-party client: the person consents before any code.
                let consent = try #require(answer["consent"], "\(answer)")
                #expect(answer["redirectURL"] == nil && consent["clientName"]?.stringValue == "Research agent" && consent["redirectHost"]?.stringValue == "127.0.0.1")
                let (decided, redirect) = try await P.request("POST", try P.url(consent["submit"]?.stringValue), json: try JSONValue.object([
                    "ticket": try #require(consent["ticket"]), "decision": "approve",
                ]).json())
                #expect(decided == 200, "\(redirect)")
                let client = try OAuthClient(configuration: .init(issuer: issuer, clientID: clientID, redirectURI: try #require(URL(string: Self.redirectURI))))
                let code = try await client.authorizationCode(from: try P.url(redirect["redirectURL"]?.stringValue), for: authorization)
                let tokens = try await client.exchange(code: code, for: authorization)
                #expect(tokens.idTokenClaims?.audiences == [clientID])
                #expect(hits("good.json") == 1, "fetched once, then cached")

                let fresh = documents.appendingPathComponent("fresh.json").absoluteString
                for _ in 0..<2 { _ = try await Self.authorize(issuer, clientID: fresh) }
                #expect(hits("fresh.json") == 2, "no-store: fetched each time")
            }
        }
    }

    @Test("each bad document or fetch is refused as invalid_client with its reason", arguments: [
        ("mismatch.json", "is not the URL it was fetched from"), ("secret.json", "no shared secret"), ("implicit.json", "response_types"),
        ("big.json", "larger than"), ("slow.json", "longer than"), ("redirect.json", "redirects are not followed"), ("missing.json", "HTTP 404"),
    ])
    func refusals(path: String, reason: String) async throws {
        try await Self.withDocuments { documents, _ in
            try await Self.provider { issuer, _ in
                let started = ContinuousClock.now
                let (status, answer, _) = try await Self.authorize(issuer, clientID: documents.appendingPathComponent(path).absoluteString)
                #expect(status == 401 && answer["error"]?.stringValue == "invalid_client", "\(answer)")
                #expect(answer["error_description"]?.stringValue?.contains(reason) == true, "\(answer)")
                #expect(ContinuousClock.now - started < .seconds(3), "the 1 s deadline holds")
            }
        }
    }

    @Test("a redirect URI not in the document is refused, and no redirect is made to it")
    func redirectNotInDocument() async throws {
        try await Self.withDocuments { documents, _ in
            try await Self.provider { issuer, _ in
                let clientID = documents.appendingPathComponent("good.json").absoluteString
                let (status, answer, _) = try await Self.authorize(issuer, clientID: clientID, redirectURI: "http://127.0.0.1.evil.example/callback")
                #expect(status == 400 && answer["error"]?.stringValue == "invalid_request", "\(answer)")
            }
        }
    }

    @Test("documents at private, loopback, link-local or reserved addresses, and URLs of the wrong shape, are refused before any request", arguments: [
        ("https://127.0.0.1/client.json", "not public"), ("https://localhost/client.json", "not public"), ("https://10.1.2.3/client.json", "not public"),
        ("https://169.254.169.254/latest/meta-data", "not public"), ("https://[::1]/client.json", "not public"), ("https://[fd00::1]/client.json", "not public"),
        ("https://[::ffff:127.0.0.1]/client.json", "not public"), ("https://100.64.0.1/client.json", "not public"), ("https://0.0.0.0/client.json", "not public"),
        ("http://127.0.0.1:9/client.json", "https is required"), ("https://agent.example", "a path is required"), ("https://agent.example/", "a path is required"),
        ("https://agent.example/client.json?x=1", "no query"), ("https://agent.example/client.json#f", "no query"),
        ("https://user:pw@agent.example/client.json", "no user name"), ("https://agent.example/a/../client.json", "no . or .."),
        ("https://agent.example/a/%2E%2E/client.json", "no . or .."), ("https://agent.example/" + String(repeating: "a", count: 300), "at most 256 bytes"),
    ])
    func privateAddresses(clientID: String, reason: String) async throws {
        try await Self.provider(localNetwork: false) { issuer, _ in
            let (status, answer, _) = try await Self.authorize(issuer, clientID: clientID)
            #expect(status == 401 && answer["error"]?.stringValue == "invalid_client", "\(answer)")
            #expect(answer["error_description"]?.stringValue?.contains(reason) == true, "\(clientID): \(answer)")
        }
    }

    @Test("off by default: a URL client_id is refused and discovery does not offer documents")
    func offByDefault() async throws {
        try await Self.provider(enabled: false) { issuer, _ in
            let (status, answer, _) = try await Self.authorize(issuer, clientID: "https://agent.example/client.json")
            #expect(status == 401 && answer["error_description"]?.stringValue?.contains("does not take") == true, "\(answer)")
            let (_, metadata) = try await P.request("GET", issuer.appendingPathComponent(ProtocolPath.discovery))
            #expect(metadata["client_id_metadata_document_supported"] == nil)
        }
    }
}
