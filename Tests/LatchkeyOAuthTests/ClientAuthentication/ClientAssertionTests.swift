import Foundation
import LatchkeyCrypto
@testable import LatchkeyOAuth
import Testing

/// `private_key_jwt` assertions (RFC 7523 §3, draft-ietf-oauth-rfc7523bis §4): what the
/// client makes, and every rule the provider's check enforces.
@Suite("Client assertions (RFC 7523)")
struct ClientAssertionTests {
    static let issuer = "https://login.example.com"
    static let clientID = "backup-service"

    struct Fixture {
        let key: SigningKey
        let signer: ClientAssertionSigner
        let keys: JWKSet

        init(_ algorithm: SigningAlgorithm = .es256) throws {
            key = try SigningKey.generate(algorithm)
            signer = try ClientAssertionSigner(key: key)
            keys = try JWKSet(json: signer.publicJWKSet)
        }

        /// A hand-made assertion with any claims, signed by this key.
        func forge(_ claims: JSONValue, type: String = "JWT") throws -> String {
            try signer.sign(payload: claims.json(), type: type)
        }

        func verify(_ assertion: String, audiences: [String] = [ClientAssertionTests.issuer], now: Date = Date()) throws -> ClientAssertion.Claims {
            try ClientAssertion.verify(assertion, clientID: ClientAssertionTests.clientID, keys: keys, audiences: audiences, now: now)
        }
    }

    @Test("RFC 7523 §2.2: the example request's members read back as the RFC spells them; §3's rules are the library's")
    func rfcExample() throws {
        let vector = try JOSEVectorTests.vector("rfc7523-client-authentication.json")
        let form = try FormEncoding.decode(Substring(try #require(vector["tokenRequestForm"]?.stringValue)))
        let request = TokenRequest(form: form)
        #expect(request.grantType?.rawValue == vector["grantType"]?.stringValue && request.code == vector["code"]?.stringValue)
        let authentication = ClientAuthenticationParameters(form: form)
        #expect(authentication.clientAssertionType == vector["clientAssertionType"]?.stringValue)
        #expect(ClientAssertion.assertionType == vector["clientAssertionType"]?.stringValue)
        let rules = try #require(vector["rules"])
        #expect(ClientAssertion.maximumLifetime == rules["maximumLifetimeSeconds"]?.numberValue.map { TimeInterval($0) })
        #expect(ClientAssertion.lifetime == rules["clientLifetimeSeconds"]?.numberValue.map { TimeInterval($0) })
        // The made assertion follows them: iss = sub = the client, a 128-bit jti, 300 s.
        let fixture = try Fixture()
        let made = try ClientAssertion.make(clientID: Self.clientID, audience: Self.issuer, signer: fixture.signer)
        let claims = try fixture.verify(made)
        #expect(claims.issuer == Self.clientID && claims.subject == Self.clientID)
        #expect(try Base64URL.decode(claims.id).count * 8 == Int(rules["jtiRandomBits"]?.numberValue ?? 0))
        #expect(claims.expiresAt.timeIntervalSince(claims.issuedAt) == ClientAssertion.lifetime)
    }

    static func claims(
        iss: String = clientID, sub: String = clientID, aud: JSONValue = .string(issuer), jti: String = "a-unique-id",
        iat: Double = Date().timeIntervalSince1970, lifetime: Double = 300
    ) -> JSONValue {
        ["iss": .string(iss), "sub": .string(sub), "aud": aud, "jti": .string(jti), "iat": .number(iat), "exp": .number(iat + lifetime)]
    }

    @Test("a made assertion: iss = sub = client id, aud the issuer, 128-bit jti, five minutes, kid the RFC 7638 thumbprint")
    func made() throws {
        let fixture = try Fixture()
        let now = Date()
        let assertion = try ClientAssertion.make(clientID: Self.clientID, audience: Self.issuer, signer: fixture.signer, now: now)
        let jws = try JWS(compact: assertion)
        #expect(jws.algorithm == .es256)
        #expect(jws.keyID == (try fixture.key.publicKey.jwk.thumbprint()))
        #expect(jws.header["typ"]?.stringValue == "JWT")
        let claims = try fixture.verify(assertion, now: now)
        #expect(claims.issuer == Self.clientID && claims.subject == Self.clientID && claims.audience == Self.issuer)
        #expect(try Base64URL.decode(claims.id).count == 16)
        #expect(claims.expiresAt.timeIntervalSince(claims.issuedAt) == 300)
        let again = try ClientAssertion.make(clientID: Self.clientID, audience: Self.issuer, signer: fixture.signer, now: now)
        #expect(try fixture.verify(again, now: now).id != claims.id)
    }

    @Test("the public JWK Set is what a provider registers: one EC key with kid, alg ES256 and use sig")
    func publicJWKSet() throws {
        let fixture = try Fixture()
        let document = try JSONValue(json: fixture.signer.publicJWKSet)
        let key = try #require(document["keys"]?.arrayValue?.first)
        #expect(document["keys"]?.arrayValue?.count == 1)
        #expect(key["kty"] == "EC" && key["crv"] == "P-256" && key["alg"] == "ES256" && key["use"] == "sig")
        #expect(key["kid"]?.stringValue == fixture.signer.keyID)
        #expect(key["d"] == nil, "no private member")
    }

    @Test("an Ed25519 client key signs EdDSA assertions")
    func edDSA() throws {
        let fixture = try Fixture(.ed25519)
        let assertion = try ClientAssertion.make(clientID: Self.clientID, audience: Self.issuer, signer: fixture.signer)
        #expect(try JWS(compact: assertion).algorithm == .edDSA)
        _ = try fixture.verify(assertion)
    }

    @Test("aud as a one-value list is read; the token endpoint is accepted where the provider lists it")
    func audienceForms() throws {
        let fixture = try Fixture()
        _ = try fixture.verify(try fixture.forge(Self.claims(aud: [.string(Self.issuer)])))
        let endpoint = Self.issuer + "/token"
        _ = try fixture.verify(try fixture.forge(Self.claims(aud: .string(endpoint))), audiences: [Self.issuer, endpoint])
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let name: String
        let make: @Sendable (Fixture) throws -> String
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(name: "another provider's audience") { try $0.forge(claims(aud: "https://evil.example.com")) },
        Refusal(name: "aud a list holding the issuer and another value (audience injection)") {
            try $0.forge(claims(aud: [.string(issuer), "https://evil.example.com"]))
        },
        Refusal(name: "iss another client") { try $0.forge(claims(iss: "someone-else")) },
        Refusal(name: "sub another client") { try $0.forge(claims(sub: "someone-else")) },
        Refusal(name: "expired") { try $0.forge(claims(iat: Date().timeIntervalSince1970 - 900, lifetime: 300)) },
        Refusal(name: "issued in the future") { try $0.forge(claims(iat: Date().timeIntervalSince1970 + 600)) },
        Refusal(name: "lives over ten minutes") { try $0.forge(claims(lifetime: 3600)) },
        Refusal(name: "jti missing") { fixture in
            var object = try #require(claims().objectValue)
            object["jti"] = nil
            return try fixture.forge(.object(object))
        },
        Refusal(name: "an unexpected typ (a DPoP proof passed off as an assertion)") { try $0.forge(claims(), type: "dpop+jwt") },
        Refusal(name: "signed by a key not in the client's set") { fixture in
            let other = try ClientAssertionSigner(key: SigningKey.generate(.es256))
            return try ClientAssertion.make(clientID: clientID, audience: issuer, signer: other)
        },
        Refusal(name: "signed by another key under the registered kid") { fixture in
            let other = try SigningKey.generate(.es256)
            let impostor = try ClientAssertionSigner(publicKey: fixture.key.publicKey) { try other.signature(for: $0) }
            return try ClientAssertion.make(clientID: clientID, audience: issuer, signer: impostor)
        },
        Refusal(name: "alg none") { _ in
            Base64URL.encode(Data(#"{"alg":"none"}"#.utf8)) + "." + Base64URL.encode(try claims().json()) + "."
        },
    ]

    @Test("refused", arguments: refusals)
    func refused(_ refusal: Refusal) throws {
        let fixture = try Fixture()
        let assertion = try refusal.make(fixture)
        #expect(throws: OAuthError.self, "\(refusal.name)") { _ = try fixture.verify(assertion) }
    }
}
