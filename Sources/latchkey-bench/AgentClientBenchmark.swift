import Foundation
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol

/// What the provider does for AI-agent clients (issue 76, the MCP authorization spec),
/// measured in the same run as its reference: a resource server checking a JWT access
/// token (RFC 9068) offline with the provider's JWKS, against the same server asking the
/// provider's introspection endpoint (RFC 7662) about an opaque token, one round trip
/// over loopback. Target: the offline check at least 5x cheaper.
struct AgentClientBenchmark {
    var seconds: Double
    static let resource = "https://mcp.bench.example/mcp"

    func run() async throws -> Report {
        var report = try await ProviderBenchmark.withProvider { issuer, _, _ in
            let transport = HTTP1Transport()
            let admin = AdminAPIClient(issuer: issuer, token: ServeProcess.adminToken, transport: transport)
            let server = try await admin.call(AdminAPI.createResourceServer, body: .init(name: "mcp", resource: Self.resource, accessTokenFormat: "jwt"))
            guard let created = server.answer else { throw BenchmarkError("register the resource server: HTTP \(server.status)") }
            let signer = try ClientAssertionSigner(key: SigningKey.generate(.es256))
            let jwks = try JSONDecoder().decode(JWKSDocument.self, from: signer.publicJWKSet)
            let registered = try await admin.call(AdminAPI.createClient, body: AdminAPI.Client(id: "agent", jwks: jwks, grantTypes: ["client_credentials"]))
            guard registered.status == 201 else { throw BenchmarkError("register the agent: HTTP \(registered.status)") }
            guard let redirect = URL(string: "http://127.0.0.1/callback") else { throw BenchmarkError("redirect URI") }
            let client = try OAuthClient(configuration: .init(issuer: issuer, clientID: "agent", redirectURI: redirect, authentication: .privateKeyJWT(signer, audience: .issuer)))
            let token = try await client.clientCredentials(resource: Self.resource).accessToken
            let keys = try JWKSet(json: try await transport.send(TransportRequest(method: HTTPMethod.get, url: issuer.appendingPathComponent(ProtocolPath.jwks))).body)
            let validator = JWTAccessTokenValidator(issuer: issuer.absoluteString, resource: Self.resource)
            let offline = try measureThroughput(seconds: seconds) { _ = try validator.validate(token, keys: keys) }

            let basic = "Basic " + Data("\(created.id):\(created.secret)".utf8).base64EncodedString()
            let introspection = issuer.appendingPathComponent(ProtocolPath.introspection)
            let body = FormEncoding.encode(TokenIntrospectionRequest(token: token).formItems)
            let asked = try await ProviderBenchmark(seconds: seconds).measure(concurrency: 1) { _ in
                let response = try await transport.send(TransportRequest(
                    method: HTTPMethod.post, url: introspection,
                    headers: ["Content-Type": "application/x-www-form-urlencoded", "Authorization": basic], body: body
                ))
                guard response.status == 200, String(decoding: response.body, as: UTF8.self).contains("\"active\":true") else {
                    throw BenchmarkError("introspection: HTTP \(response.status)")
                }
            }
            var report = Report(title: "Agent clients: a JWT access token (RFC 9068) checked offline vs an introspection round trip (RFC 7662)")
            report.notes = ["one resource server, one client, loopback; target: offline checks/s >= 5x introspections/s"]
            report.lines.append(ReportLine(
                name: "JWT access token checks/s (offline, JWKS)", latchkey: offline, reference: asked.throughput,
                referenceName: "introspection round trips/s", target: .ratioAtLeast(5)
            ))
            report.lines.append(ReportLine(
                name: "introspection errors", latchkey: Double(asked.errors), reference: nil, referenceName: asked.firstError ?? "none", target: .atMost(0)
            ))
            return report
        }
        report.lines += try await MetadataDocumentSignInBenchmark(seconds: seconds).run()
        report.notes.append("a person's sign-in (redirect flow over HTTP, ID token checked) as a client known by its metadata document, cached, consent remembered, vs a registered client; 9 paired rounds; target: the median pair's p50 ratio <= 1.1")
        return report
    }
}
