import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import Testing

/// ``JWTAccessTokenValidator`` (RFC 9068 §4): a good token passes; each rule refuses by name.
@Suite("OAuth: JWT access tokens, checked offline")
struct JWTAccessTokenValidatorTests {
    static let issuer = "https://idp.example"
    static let resource = "https://mcp.example/mcp"

    struct Signer {
        let key: SigningKey
        let kid: String
        var keys: JWKSet { JWKSet(keys: [.init(keyID: kid, algorithm: "ES256", verifyingKey: key.publicKey)]) }

        init() throws {
            key = try SigningKey.generate(.es256)
            kid = try key.publicKey.jwk.thumbprint()
        }

        func token(
            issuer: String = JWTAccessTokenValidatorTests.issuer, audience: String = JWTAccessTokenValidatorTests.resource,
            expiresIn: TimeInterval = 300, issuedAgo: TimeInterval = 0, type: String? = "at+jwt", kid: String? = nil
        ) throws -> String {
            let now = Date()
            let claims = JWTAccessTokenClaims(
                issuer: issuer, subject: "ada", audiences: [audience], expiresAt: now.addingTimeInterval(expiresIn),
                issuedAt: now.addingTimeInterval(-issuedAgo), clientID: "agent", tokenID: "j1", scope: "tools", dpopJKT: "thumb"
            )
            return try JWS.sign(payload: try claims.encodedJSON, with: key, keyID: kid ?? self.kid, type: type)
        }
    }

    let validator = JWTAccessTokenValidator(issuer: issuer, resource: resource)

    @Test("a good token gives its claims, cnf.jkt included; application/at+jwt is the same type")
    func good() throws {
        let signer = try Signer()
        let claims = try validator.validate(try signer.token(), keys: signer.keys)
        #expect(claims.subject == "ada" && claims.clientID == "agent" && claims.scope == "tools" && claims.dpopJKT == "thumb" && claims.tokenID == "j1")
        _ = try validator.validate(try signer.token(type: "application/AT+JWT"), keys: signer.keys)
    }

    @Test("each broken rule is refused with its own code")
    func refusals() throws {
        let signer = try Signer()
        let cases: [(String, String, OAuthError.Code)] = [
            ("no typ (an ID token's shape)", try signer.token(type: nil), .malformedJWS),
            ("typ JWT", try signer.token(type: "JWT"), .malformedJWS),
            ("another issuer", try signer.token(issuer: "https://evil.example"), .invalidIssuer),
            ("another resource", try signer.token(audience: "https://other.example/mcp"), .invalidAudience),
            ("expired", try signer.token(expiresIn: -120), .expired),
            ("issued in the future", try signer.token(issuedAgo: -600), .issuedInFuture),
            ("an unknown key", try signer.token(kid: "other"), .unknownKey),
            ("another key's signature", try Signer().token(kid: signer.kid), .invalidSignature),
        ]
        for (name, token, code) in cases {
            #expect(throws: OAuthError.self, "\(name)") { _ = try validator.validate(token, keys: signer.keys) }
            do {
                _ = try validator.validate(token, keys: signer.keys)
            } catch let error as OAuthError {
                #expect(error.code == code, "\(name): \(error)")
            }
        }
        // alg none is refused before anything else is read.
        let unsigned = Base64URL.encode(Data(#"{"alg":"none","typ":"at+jwt"}"#.utf8)) + "." + Base64URL.encode(Data("{}".utf8)) + "."
        #expect(throws: OAuthError.self) { _ = try validator.validate(unsigned, keys: signer.keys) }
    }
}
