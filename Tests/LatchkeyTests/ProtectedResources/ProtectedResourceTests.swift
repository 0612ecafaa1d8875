import Foundation
import Hummingbird
@testable import Latchkey
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Synchronization
import Testing

/// `Embedded.send(_:to:)`: a protected resource that names its provider (RFC 9728), with
/// the reference provider in-process and a resource on loopback that checks every token
/// at the provider's introspection endpoint, as a resource server does (RFC 7662).
@Suite("Protected resources that name their provider (RFC 9728)")
struct ProtectedResourceTests {
    /// What the resource serves: its metadata and `/mcp/tools`, for tokens the provider
    /// says are active and for this resource; what it saw, for the assertions.
    final class Resource: Sendable {
        /// The resource server's introspection credential, once registered.
        let credential = Mutex<(id: String, secret: String)?>(nil)
        /// The metadata members the resource serves, by test.
        let metadata = Mutex<[String: JSONValue]>([:])
        /// The `resource_metadata` its 401 names; nil for the resource's own well-known URL.
        let metadataLocation = Mutex<String?>(nil)
        /// Tokens presented, in order.
        let presented = Mutex<[String]>([])
        let issuer: URL

        init(issuer: URL) { self.issuer = issuer }

        func router() -> Router<BasicRequestContext> {
            let router = Router()
            router.get(".well-known/oauth-protected-resource/mcp") { _, _ in
                Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: try JSONValue.object(self.metadata.withLock { $0 }).json())))
            }
            router.get("mcp/tools") { request, _ in try await self.tools(request) }
            router.post("mcp/tools") { request, _ in try await self.tools(request) }
            return router
        }

        private func tools(_ request: Request) async throws -> Response {
            let own = "http://\(request.head.authority ?? "")"
            let location = metadataLocation.withLock { $0 } ?? own + "/.well-known/oauth-protected-resource/mcp"
            let challenge = "Bearer realm=\"tools\", resource_metadata=\"\(location)\""
            guard let authorization = request.headers[.authorization], authorization.hasPrefix("Bearer ") else {
                return Response(status: .unauthorized, headers: [.wwwAuthenticate: challenge])
            }
            let token = String(authorization.dropFirst(7))
            presented.withLock { $0.append(token) }
            let (id, secret) = try #require(credential.withLock { $0 })
            let answer = try await HTTP1Transport().send(TransportRequest(
                method: "POST", url: issuer.appendingPathComponent("introspect"),
                headers: ["Content-Type": "application/x-www-form-urlencoded", "Authorization": "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString()],
                body: FormEncoding.encode([("token", token)])
            ))
            let introspection = try JSONValue(json: answer.body)
            guard introspection["active"]?.boolValue == true, introspection["aud"]?.stringValue == own + "/mcp" else {
                return Response(status: .unauthorized, headers: [.wwwAuthenticate: challenge + ", error=\"invalid_token\""])
            }
            let body = try JSONValue.object(["sub": introspection["sub"] ?? .null, "aud": introspection["aud"] ?? .null]).json()
            return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
    }

    /// A provider, a vault with a credential bound there, and the resource registered at
    /// the provider as `http://127.0.0.1:PORT/mcp`.
    static func run(_ body: @escaping @Sendable (ProviderHarness, Embedded, Resource, URL) async throws -> Void) async throws {
        try await ProviderHarness.withVault { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host], configure: { $0.signInFlow = .redirect })
            _ = try await embedded.registerCredential(from: try await provider.createIdentity().bindURL)
            let resource = Resource(issuer: provider.issuer)
            try await LiveServer.run(resource.router(), label: "resource") { base in
                let identifier = base.absoluteString + "/mcp"
                let created = try await provider.admin.call(AdminAPI.createResourceServer, body: .init(name: "tools", resource: identifier))
                let server = try #require(created.answer, "\(created.status)")
                resource.credential.withLock { $0 = (server.id, server.secret) }
                resource.metadata.withLock {
                    $0 = ["resource": .string(identifier), "authorization_servers": [.string(provider.issuer.absoluteString)], "resource_name": "tools"]
                }
                try await body(provider, embedded, resource, try #require(URL(string: identifier + "/tools")))
            }
        }
    }

    static func access(_ providers: [URL]) throws -> ProtectedResourceAccess {
        ProtectedResourceAccess(allowedProviders: providers, clientID: "latchkey-cli", redirectURI: try ProviderHarness.callback)
    }

    @Test("a 401 naming resource_metadata leads to an allowed provider: a token for that resource alone, kept, and the call made again once")
    func followsMetadata() async throws {
        try await Self.run { provider, embedded, resource, tools in
            let answer = try await embedded.send(TransportRequest(method: "GET", url: tools), to: try Self.access([provider.issuer]))
            #expect(answer.response.status == 200, "\(String(decoding: answer.response.body, as: UTF8.self))")
            let tokens = try #require(answer.tokens)
            #expect(tokens.resource == String(tools.absoluteString.dropLast("/tools".count)))
            #expect(answer.metadata?.resourceName == "tools")
            #expect(resource.presented.withLock { $0 } == [tokens.accessToken])

            // The token is audience-bound: the provider's own userinfo refuses it.
            let userinfo = try await AccessTokenTransport(inner: HTTP1Transport(), accessToken: tokens.accessToken, dpop: nil, allowedOrigins: [try #require(WebOrigin(provider.issuer))])
                .send(TransportRequest(method: "GET", url: provider.issuer.appendingPathComponent("userinfo")))
            #expect(userinfo.status == 401)

            // Kept: the next call signs in no more (the same token), and the provider's own
            // tokens are kept apart from the resource's.
            let again = try await embedded.send(TransportRequest(method: "POST", url: tools, body: Data("{}".utf8)), to: try Self.access([provider.issuer]))
            #expect(again.response.status == 200 && again.tokens?.accessToken == tokens.accessToken)
            let own = try await embedded.validTokens(issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: try ProviderHarness.callback)
            #expect(own.resource == nil && own.accessToken != tokens.accessToken)

            // Revoked at the provider: refused as invalid_token, replaced once.
            try await embedded.revoke(tokens)
            let replaced = try await embedded.send(TransportRequest(method: "GET", url: tools), to: try Self.access([provider.issuer]))
            #expect(replaced.response.status == 200 && replaced.tokens?.accessToken != tokens.accessToken)
        }
    }

    @Test("a resource that names a provider the user did not allow: no sign-in, nothing sent there, a clear error")
    func providerNotAllowed() async throws {
        try await Self.run { provider, embedded, resource, tools async throws in
            // The resource names only a stranger; the user allowed the real provider.
            resource.metadata.withLock { $0["authorization_servers"] = ["https://id.attacker.example"] }
            await #expect {
                try await embedded.send(TransportRequest(method: "GET", url: tools), to: try Self.access([provider.issuer]))
            } throws: { error in
                let error = try #require(error as? LatchkeyError)
                return error.code == .domainNotAllowed && error.reason.contains("id.attacker.example") && error.reason.contains("none of which is allowed")
            }
            // The resource names the real provider, which the user did not allow.
            resource.metadata.withLock { $0["authorization_servers"] = [.string(provider.issuer.absoluteString)] }
            await #expect {
                try await embedded.send(TransportRequest(method: "GET", url: tools), to: try Self.access([try #require(URL(string: "https://id.example"))]))
            } throws: { ($0 as? LatchkeyError)?.code == .domainNotAllowed }
            #expect(resource.presented.withLock { $0 }.isEmpty, "no token went anywhere")
            let events = try await provider.auditEvents()
            #expect(events.filter { $0.type.rawValue.hasPrefix("signin") }.isEmpty, "no sign-in was made")
        }
    }

    @Test("metadata that is not the called resource's, or sits on another origin, is refused before any sign-in")
    func metadataChecked() async throws {
        try await Self.run { provider, embedded, resource, tools in
            let access = try Self.access([provider.issuer])
            // Metadata for another resource on the same host (§3.3).
            let port = try #require(tools.port)
            for other in ["http://127.0.0.1:\(port)/other", "http://127.0.0.1:\(port)/mcpx", "http://localhost:\(port)/mcp", "http://127.0.0.1:1/mcp"] {
                resource.metadata.withLock { $0["resource"] = .string(other) }
                await #expect {
                    try await embedded.send(TransportRequest(method: "GET", url: tools), to: access)
                } throws: { error in
                    ((error as? LatchkeyError)?.underlying as? OAuthError)?.code == .resourceMetadataMismatch
                }
            }
            // A resource_metadata on another origin is not fetched.
            resource.metadata.withLock { $0["resource"] = .string(String(tools.absoluteString.dropLast("/tools".count))) }
            resource.metadataLocation.withLock { $0 = provider.issuer.appendingPathComponent(".well-known/oauth-protected-resource").absoluteString }
            await #expect {
                try await embedded.send(TransportRequest(method: "GET", url: tools), to: access)
            } throws: { error in
                ((error as? LatchkeyError)?.underlying as? OAuthError)?.code == .resourceMetadataMismatch
            }
            #expect(resource.presented.withLock { $0 }.isEmpty)
        }
    }
}
