import Foundation
import Hummingbird
import Latchkey
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyTestSupport
import Testing

/// A provider that lies to the host (docs/SECURITY.md, "PAM"): an OIDC provider on
/// Hummingbird in-process that answers the device grant as if someone approved, each time
/// with one lie. The helper must refuse every one (`PAM_AUTH_ERR`), whatever the person at
/// the login does.
@Suite("PAM: a provider that lies to the host", .serialized)
struct PAMLyingProviderTests {
    enum Lie: String, CaseIterable, Sendable {
        /// No lie: the control, which must let alice in, so each lie is what fails.
        case none
        /// The ID token names another issuer.
        case wrongIssuer
        /// The ID token is signed by a key the provider does not publish.
        case badSignature
        /// `/userinfo` answers for another subject than the ID token's.
        case anotherSubject
        /// `auth_time` is an hour old: an approval from before this request.
        case oldApproval
        /// The ID token is for another client.
        case anotherAudience
    }

    static func json(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// The issuer a request reached: this server's own origin.
    @Sendable static func base(_ request: Request) -> String { "http://\(request.head.authority ?? "127.0.0.1")" }

    /// Runs the liar; `body` gets its issuer URL.
    static func withLiar(_ lie: Lie, clientID: String, _ body: @escaping @Sendable (URL) async throws -> Void) async throws {
        let key = try SigningKey.generate(.es256)
        let published = try ClientAssertionSigner(key: key)
        let jwks = String(decoding: try published.publicJWKSet, as: UTF8.self)
        let other = try SigningKey.generate(.es256)
        let router = Router()
        router.get(".well-known/openid-configuration") { request, _ in
            let issuer = base(request)
            return json("""
                {"issuer": "\(issuer)", "authorization_endpoint": "\(issuer)/authorize", "token_endpoint": "\(issuer)/token",
                 "jwks_uri": "\(issuer)/jwks", "userinfo_endpoint": "\(issuer)/userinfo", "revocation_endpoint": "\(issuer)/revoke",
                 "device_authorization_endpoint": "\(issuer)/device_authorization", "response_types_supported": ["code"],
                 "subject_types_supported": ["public"], "id_token_signing_alg_values_supported": ["ES256"],
                 "token_endpoint_auth_methods_supported": ["private_key_jwt"], "grant_types_supported": ["urn:ietf:params:oauth:grant-type:device_code"]}
                """)
        }
        router.get("jwks") { _, _ in json(jwks) }
        router.post("device_authorization") { request, _ in
            json(#"{"device_code": "dc", "user_code": "BCDF-GHJK", "verification_uri": "\#(base(request))/device", "expires_in": 60, "interval": 1}"#)
        }
        router.post("token") { request, _ in
            let now = Date()
            let claims = IDTokenClaims(
                issuer: lie == .wrongIssuer ? "https://evil.example" : base(request), subject: "alice-id",
                audiences: [lie == .anotherAudience ? "another-client" : clientID], expiresAt: now.addingTimeInterval(300), issuedAt: now,
                authTime: lie == .oldApproval ? now.addingTimeInterval(-3600) : now
            )
            let idToken = try JWS.sign(
                payload: try JSONEncoder().encode(claims), with: lie == .badSignature ? other : key, keyID: published.keyID, type: "JWT"
            )
            return json(#"{"access_token": "at", "token_type": "Bearer", "expires_in": 300, "id_token": "\#(idToken)", "scope": "openid"}"#)
        }
        router.get("userinfo") { _, _ in
            json(#"{"sub": "\#(lie == .anotherSubject ? "mallory-id" : "alice-id")", "preferred_username": "alice"}"#)
        }
        router.post("revoke") { _, _ in Response(status: .ok) }
        try await LiveServer.run(router, label: "lying-provider", body)
    }

    @Test("each lie (another issuer, a signature by an unpublished key, userinfo for another subject, an hour-old auth_time, another audience) is PAM_AUTH_ERR; the same provider telling the truth lets alice in", arguments: Lie.allCases)
    func lies(_ lie: Lie) async throws {
        try PAMHost.requireTools()
        try await Self.withLiar(lie, clientID: "web-1") { issuer in
            let host = try await PAMHost.enrollOnly(issuer: issuer, clientID: "web-1")
            let (status, output) = try await host.start(service: try host.service(), user: "alice").finish(seconds: 30)
            if lie == .none {
                #expect(status == 0 && output.contains("successfully authenticated"), "\(output)")
            } else {
                #expect(status != 0 && output.contains("Authentication failure") && !output.contains("successfully authenticated"), "\(lie): \(output)")
            }
        }
    }
}
