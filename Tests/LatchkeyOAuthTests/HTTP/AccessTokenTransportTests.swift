import Foundation
import Hummingbird
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyTestSupport
import Synchronization
import Testing

/// ``AccessTokenTransport`` against a real resource server on loopback that checks DPoP
/// proofs with ``DPoPProofVerifier`` (RFC 9449 §7, §9).
@Suite("AccessTokenTransport: bearer and DPoP presentation, the resource server's nonce challenge")
struct AccessTokenTransportTests {
    /// What the resource server saw of one request.
    struct Seen: Sendable {
        var authorization: String?
        var proofNonce: String?
        var proofError: String?
    }

    /// A resource at `/resource` that wants `DPoP <token>` with a valid proof; with
    /// `nonce`, proofs must carry it (401 `use_dpop_nonce` otherwise, as §9 says); with
    /// `alwaysChallenge`, it challenges every request.
    static func withResource(
        nonce: String? = nil, alwaysChallenge: Bool = false,
        _ body: @escaping @Sendable (URL, @escaping @Sendable () -> [Seen]) async throws -> Void
    ) async throws {
        let seen = Mutex<[Seen]>([])
        let verifier = DPoPProofVerifier()
        let router = Router()
        router.get("resource") { request, _ -> Response in
            let authorization = request.headers[.authorization]
            let proofs = request.headers.filter { $0.name.canonicalName == "dpop" }.map(\.value)
            var record = Seen(authorization: authorization)
            var headers: HTTPFields = [:]
            if let nonce, let name = HTTPFields.Element.Name("DPoP-Nonce") { headers[name] = nonce }
            guard let url = URL(string: "http://\(request.head.authority ?? "")/resource") else { return Response(status: .badRequest) }
            do {
                let token = String(authorization?.dropFirst("DPoP ".count) ?? "")
                _ = try verifier.verify(proofs, method: "GET", url: url, accessToken: token, nonceIsValid: nonce.map { expected in { $0 == expected } })
                record.proofNonce = nonce
            } catch {
                record.proofError = "\(error)"
            }
            seen.withLock { $0.append(record) }
            if alwaysChallenge || record.proofError != nil {
                headers[.wwwAuthenticate] = "DPoP error=\"use_dpop_nonce\", error_description=\"Resource server requires nonce in DPoP proof\""
                return Response(status: .unauthorized, headers: headers)
            }
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: "{\"ok\":true}")))
        }
        router.get("bearer") { request, _ -> Response in
            seen.withLock { $0.append(Seen(authorization: request.headers[.authorization])) }
            return Response(status: .ok)
        }
        try await LiveServer.run(router, label: "resource-server") { base in
            try await body(base) { seen.withLock { $0 } }
        }
    }

    @Test("a DPoP token: Authorization DPoP with a proof carrying ath; a use_dpop_nonce challenge is answered once, and the nonce kept for the next request")
    func nonceChallenge() async throws {
        try await Self.withResource(nonce: "resource-nonce-1") { base, seen in
            let signer = try DPoPSigner(key: SigningKey.generate(.es256))
            let transport = AccessTokenTransport(inner: HTTP1Transport(), accessToken: "bound-token", dpop: signer)
            let url = base.appendingPathComponent("resource")
            let first = try await transport.send(TransportRequest(method: "GET", url: url))
            #expect(first.status == 200)
            #expect(seen().count == 2, "one challenge, one retry")
            #expect(seen().first?.proofError != nil && seen().last?.proofError == nil)
            #expect(seen().allSatisfy { $0.authorization == "DPoP bound-token" })
            #expect(signer.nonce(for: url) == "resource-nonce-1")
            // The nonce is sent from the start now: no second challenge.
            let second = try await transport.send(TransportRequest(method: "GET", url: url))
            #expect(second.status == 200 && seen().count == 3 && seen().last?.proofNonce == "resource-nonce-1")
        }
    }

    @Test("a server that challenges every time gets one retry, not a loop; its 401 is returned")
    func endlessChallenge() async throws {
        try await Self.withResource(nonce: "n", alwaysChallenge: true) { base, seen in
            let transport = AccessTokenTransport(inner: HTTP1Transport(), accessToken: "t", dpop: try DPoPSigner(key: SigningKey.generate(.es256)))
            let response = try await transport.send(TransportRequest(method: "GET", url: base.appendingPathComponent("resource")))
            #expect(response.status == 401 && seen().count == 2)
        }
    }

    @Test("a bearer token: Authorization Bearer and no proof; a request with its own Authorization or DPoP header is refused; http off loopback is refused")
    func bearerAndRefusals() async throws {
        try await Self.withResource { base, seen in
            let bearer = AccessTokenTransport(inner: HTTP1Transport(), accessToken: "plain-token", dpop: nil)
            let sent = try await bearer.send(TransportRequest(method: "GET", url: base.appendingPathComponent("bearer")))
            #expect(sent.status == 200)
            #expect(seen().last?.authorization == "Bearer plain-token")
            for header in ["Authorization", "authorization", "DPoP"] {
                let refused = await #expect(throws: OAuthError.self) {
                    try await bearer.send(TransportRequest(method: "GET", url: base.appendingPathComponent("bearer"), headers: [header: "x"]))
                }
                #expect(refused?.code == .conflictingHeaders, "\(header)")
            }
            #expect(seen().count == 1, "nothing refused was sent")
            let insecure = await #expect(throws: OAuthError.self) {
                try await bearer.send(TransportRequest(method: "GET", url: try #require(URL(string: "http://example.com/api"))))
            }
            #expect(insecure?.code == .insecureTransport)
        }
    }
}
