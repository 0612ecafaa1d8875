import Foundation
import Hummingbird
import Logging
import LatchkeyTestSupport
import LatchkeyCrypto
@testable import LatchkeyOAuth

/// A small OpenID provider for the OAuth client's tests, on Hummingbird, started on
/// 127.0.0.1 port 0 in-process: discovery, a rotatable JWKS, the token endpoint
/// (authorization code with PKCE S256, refresh with or without rotation), revocation and
/// userinfo, plus switches that make it misbehave on purpose, which the reference
/// provider (used by the end-to-end tests in LatchkeyTests) never does.
actor TestProvider {
    struct PendingCode {
        var challenge: String
        var redirectURI: String
        var nonce: String?
        var clientID: String
    }

    let clientID = "test-client"
    let clientSecret = "s3cret with spaces & symbols"
    private(set) var issuer = ""
    private(set) var signingKey: SigningKey
    private(set) var keyID = "key-1"
    private var publishedKeys: [(String, SigningKey)]
    private var codes: [String: PendingCode] = [:]
    private var refreshTokens: [String: String] = [:]  // refresh token -> subject
    private var accessTokens: Set<String> = []
    private(set) var revoked: [String] = []
    /// When "the user" signed in; refreshed ID tokens keep it (OIDC Core §12.2).
    private let authTime = Date().timeIntervalSince1970 - 5

    /// Ways to make the provider misbehave.
    struct Switches: Sendable {
        var rotateRefreshTokens = true
        var discoveryIssuer: String?
        var forcedTokenError: (status: Int, body: String)?
        var advertiseIssParameter = true
        var refreshDelay: Duration = .zero
        var refreshedIDTokenSubject: String?
    }

    private(set) var switches = Switches()

    // Counters
    private(set) var tokenRequests = 0
    private(set) var refreshRequests = 0
    private(set) var jwksFetches = 0
    private(set) var lastAuthorization: String?
    private(set) var lastFormClientID: String?

    init() throws {
        signingKey = try SigningKey.generate(.es256)
        publishedKeys = [("key-1", signingKey)]
    }

    func setIssuer(_ issuer: String) { self.issuer = issuer }
    func configure(_ change: @Sendable (inout Switches) -> Void) { change(&switches) }

    /// Replaces the signing key with a new one under a new kid, publishing only the new key.
    func rotateKey() throws {
        signingKey = try SigningKey.generate(.es256)
        keyID = "key-\(publishedKeys.count + 1)"
        publishedKeys = [(keyID, signingKey)]
    }

    /// Registers a code as if the user had approved `request` at /authorize.
    func issueCode(for request: AuthorizationRequest) -> String {
        let code = UUID().uuidString
        codes[code] = PendingCode(challenge: request.pkce.challenge, redirectURI: request.redirectURI.absoluteString, nonce: request.nonce, clientID: clientID)
        return code
    }

    /// A signed ID token with default claims, `change` applied.
    func idToken(nonce: String?, accessToken: String?, subject: String = "user-42", key: SigningKey? = nil, keyID: String? = nil, _ change: (inout JSONValue) -> Void = { _ in }) throws -> String {
        let now = Date().timeIntervalSince1970
        var claims: JSONValue = ["iss": .string(issuer), "sub": .string(subject), "aud": .string(clientID), "iat": .number(now), "exp": .number(now + 300), "auth_time": .number(authTime)]
        if let nonce { claims["nonce"] = .string(nonce) }
        if let accessToken { claims["at_hash"] = .string(try IDTokenValidator.accessTokenHash(accessToken, algorithm: .es256)) }
        change(&claims)
        let payload = try claims.json()
        return try JWS.sign(payload: payload, with: key ?? signingKey, keyID: keyID ?? self.keyID, type: "JWT")
    }

    // MARK: Endpoints

    func discovery() -> String {
        let base = issuer
        let document: JSONValue = [
            "issuer": .string(switches.discoveryIssuer ?? base),
            "authorization_endpoint": "\(base)/authorize",
            "token_endpoint": "\(base)/token",
            "jwks_uri": "\(base)/jwks",
            "userinfo_endpoint": "\(base)/userinfo",
            "revocation_endpoint": "\(base)/revoke",
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": .bool(switches.advertiseIssParameter),
            "id_token_signing_alg_values_supported": ["ES256"],
        ]
        return Self.json(document)
    }

    func jwks() throws -> String {
        jwksFetches += 1
        var keys: [JSONValue] = []
        for (kid, key) in publishedKeys {
            let jwk = try key.publicKey.jwk
            keys.append(["kty": .string(jwk.kty), "crv": .string(jwk.crv ?? ""), "x": .string(jwk.x ?? ""), "y": .string(jwk.y ?? ""), "kid": .string(kid), "alg": "ES256", "use": "sig"])
        }
        return Self.json(["keys": .array(keys)])
    }

    func token(form: [String: String], authorization: String?) async throws -> (Int, String) {
        tokenRequests += 1
        lastAuthorization = authorization
        lastFormClientID = form["client_id"]
        if let forced = switches.forcedTokenError { return forced }
        switch form["grant_type"] {
        case "authorization_code":
            guard let code = form["code"], let pending = codes.removeValue(forKey: code) else {
                return (400, Self.json(["error": "invalid_grant", "error_description": "unknown or used code"]))
            }
            guard let verifier = form["code_verifier"],
                  Base64URL.encode(try DigestAlgorithm.sha256.hash(Data(verifier.utf8))) == pending.challenge
            else {
                return (400, Self.json(["error": "invalid_grant", "error_description": "PKCE verification failed"]))
            }
            guard form["redirect_uri"] == pending.redirectURI else {
                return (400, Self.json(["error": "invalid_grant", "error_description": "redirect_uri mismatch"]))
            }
            return (200, try issueTokens(nonce: pending.nonce, subject: "user-42", includeRefresh: true))
        case "refresh_token":
            refreshRequests += 1
            if switches.refreshDelay > .zero { try await Task.sleep(for: switches.refreshDelay) }
            guard let token = form["refresh_token"], let subject = refreshTokens[token] else {
                return (400, Self.json(["error": "invalid_grant", "error_description": "unknown refresh token"]))
            }
            if switches.rotateRefreshTokens { refreshTokens[token] = nil }
            return (200, try issueTokens(nonce: nil, subject: switches.refreshedIDTokenSubject ?? subject, includeRefresh: switches.rotateRefreshTokens))
        default:
            return (400, Self.json(["error": "unsupported_grant_type"]))
        }
    }

    private func issueTokens(nonce: String?, subject: String, includeRefresh: Bool) throws -> String {
        let accessToken = UUID().uuidString
        accessTokens.insert(accessToken)
        var response: JSONValue = [
            "access_token": .string(accessToken), "token_type": "Bearer", "expires_in": 300,
            "id_token": try .string(idToken(nonce: nonce, accessToken: accessToken, subject: subject)),
        ]
        if includeRefresh {
            let refreshToken = UUID().uuidString
            refreshTokens[refreshToken] = subject
            response["refresh_token"] = .string(refreshToken)
        }
        return Self.json(response)
    }

    func revoke(form: [String: String]) -> (Int, String) {
        if let token = form["token"] {
            revoked.append(token)
            refreshTokens[token] = nil
            accessTokens.remove(token)
        }
        return (200, "")
    }

    func userInfo(authorization: String?) -> (Int, String) {
        guard let authorization, authorization.hasPrefix("Bearer "), accessTokens.contains(String(authorization.dropFirst(7))) else {
            return (401, Self.json(["error": "invalid_token"]))
        }
        return (200, Self.json(["sub": "user-42", "name": "Ada Lovelace"]))
    }

    static func json(_ object: JSONValue) -> String {
        String(decoding: (try? object.json()) ?? Data(), as: UTF8.self)
    }
}

/// Runs a ``TestProvider`` on Hummingbird for the duration of `body`.
enum TestServer {
    static func with<R: Sendable>(_ provider: TestProvider, _ body: @escaping @Sendable (URL) async throws -> R) async throws -> R {
        let router = Router()
        router.get("/.well-known/openid-configuration") { _, _ in respond(200, await provider.discovery()) }
        router.get("/jwks") { _, _ in respond(200, try await provider.jwks()) }
        router.post("/token") { request, _ in
            let form = try await formBody(request)
            let (status, body) = try await provider.token(form: form, authorization: request.headers[.authorization])
            return respond(status, body)
        }
        router.post("/revoke") { request, _ in
            let (status, body) = await provider.revoke(form: try await formBody(request))
            return respond(status, body)
        }
        router.get("/userinfo") { request, _ in
            let (status, body) = await provider.userInfo(authorization: request.headers[.authorization])
            return respond(status, body)
        }
        router.get("/huge") { _, _ in respond(200, "{\"pad\":\"" + String(repeating: "A", count: 2 << 20) + "\"}") }
        router.get("/notjson") { _, _ in respond(200, "<html>hello</html>") }
        router.get("/redirect") { _, _ in
            Response(status: .found, headers: [.location: "http://127.0.0.1:1/elsewhere"])
        }
        // A provider that sends its headers, then one byte every 300 ms for up to 15 s.
        router.get("/drip") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody { writer in
                for _ in 0..<50 {
                    try await writer.write(ByteBuffer(string: " "))
                    try await Task.sleep(for: .milliseconds(300))
                }
                try await writer.finish(nil)
            })
        }
        // A provider that takes 3 s to answer at all.
        router.get("/slow") { _, _ in
            try await Task.sleep(for: .seconds(3))
            return respond(200, "{}")
        }
        router.get("/user-agent") { request, _ in respond(200, request.headers[.userAgent] ?? "") }

        return try await LiveServer.run(router, label: "test-provider") { url in
            await provider.setIssuer(url.absoluteString)
            return try await body(url)
        }
    }

    static func respond(_ status: Int, _ body: String) -> Response {
        Response(
            status: .init(code: status),
            headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: body))
        )
    }

    static func formBody(_ request: Request) async throws -> [String: String] {
        let buffer = try await request.body.collect(upTo: 64 * 1024)
        return try FormEncoding.decode(Substring(String(buffer: buffer)))
    }
}
