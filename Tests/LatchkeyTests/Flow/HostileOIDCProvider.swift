import Foundation
import LatchkeyOAuth
import Hummingbird
import LatchkeyCrypto
@testable import LatchkeyOAuth
import LatchkeyTestSupport

/// A provider that speaks enough of the protocol for `latchkey bind` and `latchkey
/// authenticate` to succeed, but puts terminal escapes where a provider supplies text:
/// the ID token's `sub`, `/token`'s `error_description`, and the redirect's
/// `error_description` (docs/SECURITY.md, "What the terminal shows"). It checks nothing it
/// is sent; the client's checks are what the tests are about.
enum HostileOIDCProvider {
    enum Lie: String, Sendable {
        /// Tokens whose ID token names `hostileText` as the subject.
        case subject
        /// `/token` refuses with `hostileText` as its error_description.
        case tokenError
        /// The sign-in redirects with `error=access_denied` and `hostileText`.
        case redirectError
    }

    static func run(_ lie: Lie, _ body: @escaping @Sendable (URL) async throws -> Void) async throws {
        let key = try SigningKey.generate(.es256)
        let router = Router()
        router.get("v1/bind/job") { request, _ in
            let base = "http://\(request.head.authority ?? "")"
            return try json([
                "publicKey": [
                    "rp": ["id": "127.0.0.1", "name": "Hostile"],
                    "user": ["id": "dXNlcg", "name": "ada", "displayName": "Ada"],
                    "challenge": "Y2hhbGxlbmdlLWNoYWxsZW5nZS1jaGFsbGVuZ2UtMzI",
                    "pubKeyCredParams": [["type": "public-key", "alg": -7]],
                ],
                "submit": "\(base)/v1/bind/job",
            ])
        }
        router.post("v1/bind/job") { request, _ in
            let posted = try await request.body.collect(upTo: 64 * 1024)
            let id = (try? JSONValue(json: Data(posted.readableBytesView)))?["id"]?.stringValue ?? ""
            return try json(["credential": ["id": .string(id)]], status: .created)
        }
        router.get(".well-known/openid-configuration") { request, _ in
            let base = "http://\(request.head.authority ?? "")"
            return try json([
                "issuer": .string(base), "authorization_endpoint": "\(base)/authorize", "token_endpoint": "\(base)/token", "jwks_uri": "\(base)/jwks",
                "code_challenge_methods_supported": ["S256"], "id_token_signing_alg_values_supported": ["ES256"],
            ])
        }
        router.get("jwks") { _, _ in
            let jwk = try key.publicKey.jwk
            return try json(["keys": [["kty": .string(jwk.kty), "crv": .string(jwk.crv ?? ""), "x": .string(jwk.x ?? ""), "y": .string(jwk.y ?? ""), "kid": "k1", "alg": "ES256", "use": "sig"]]])
        }
        // The authorization request's query travels through the authenticate URL, so the
        // redirect can carry its state and the code its nonce.
        router.get("authorize") { request, _ in
            let base = "http://\(request.head.authority ?? "")"
            return try json(["authenticateURL": "\(base)/v1/authenticate/s?\(request.uri.query ?? "")"])
        }
        router.get("v1/authenticate/s") { request, _ in
            let base = "http://\(request.head.authority ?? "")"
            return try json([
                "publicKey": ["challenge": "Y2hhbGxlbmdlLWNoYWxsZW5nZS1jaGFsbGVuZ2UtMzI", "rpId": "127.0.0.1", "userVerification": "preferred"],
                "submit": "\(base)/v1/authenticate/s?\(request.uri.query ?? "")",
            ])
        }
        router.post("v1/authenticate/s") { request, _ in
            let base = "http://\(request.head.authority ?? "")"
            let query = request.uri.queryParameters
            let state = String(query["state"] ?? "")
            let redirect = String(query["redirect_uri"] ?? "")
            var parameters = [("state", state), ("iss", base)]
            if lie == .redirectError {
                parameters += [("error", "access_denied"), ("error_description", HostileInputSuite.hostileText)]
            } else {
                parameters.append(("code", Base64URL.encode(Data(String(query["nonce"] ?? "").utf8))))
            }
            return try json(["redirectURL": "\(redirect)?\(String(decoding: FormEncoding.encode(parameters), as: UTF8.self))"])
        }
        router.post("token") { request, _ in
            let base = "http://\(request.head.authority ?? "")"
            let body = try await request.body.collect(upTo: 64 * 1024)
            let form = try FormEncoding.decode(Substring(String(buffer: body)))
            if lie == .tokenError {
                return try json(["error": "invalid_grant", "error_description": .string(HostileInputSuite.hostileText)], status: .badRequest)
            }
            let nonce = String(decoding: (try? Base64URL.decode(form["code"] ?? "")) ?? Data(), as: UTF8.self)
            let now = Date().timeIntervalSince1970
            let accessToken = "hostile-access-token"
            let claims: JSONValue = [
                "iss": .string(base), "sub": .string(HostileInputSuite.hostileText), "aud": .string(form["client_id"] ?? ""),
                "iat": .number(now), "exp": .number(now + 300), "nonce": .string(nonce),
                "at_hash": .string(try IDTokenValidator.accessTokenHash(accessToken, algorithm: .es256)),
            ]
            let idToken = try JWS.sign(payload: claims.json(), with: key, keyID: "k1", type: "JWT")
            return try json(["access_token": .string(accessToken), "token_type": "Bearer", "expires_in": 300, "id_token": .string(idToken)])
        }
        try await LiveServer.run(router, label: "hostile-oidc-provider", body)
    }

    static func json(_ object: JSONValue, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"], body: .init(byteBuffer: ByteBuffer(bytes: try object.json())))
    }
}
