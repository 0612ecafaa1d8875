import Foundation
import LatchkeyCrypto
@testable import LatchkeyOAuth
import Testing

/// The RFC vectors, through this module's own API.
@Suite("JOSE and PKCE vectors")
struct JOSEVectorTests {
    static func vector(_ name: String) throws -> JSONValue {
        // This file is Tests/LatchkeyOAuthTests/JOSE/JOSEVectorTests.swift: four levels below the root.
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors").appendingPathComponent(name)
        return try JSONValue(json: Data(contentsOf: url))
    }

    static func jwk(_ object: JSONValue?) throws -> JSONWebKey {
        try JSONDecoder().decode(JSONWebKey.self, from: try #require(object).json())
    }

    @Test("RFC 7636 App. B: the S256 challenge of the example verifier")
    func pkce() throws {
        let cases = try #require(try Self.vector("rfc7636-pkce.json")["cases"]?.arrayValue)
        for vector in cases {
            let pkce = try PKCE(verifier: try #require(vector["codeVerifier"]?.stringValue))
            #expect(pkce.challenge == vector["codeChallenge"]?.stringValue && pkce.method == "S256")
        }
        #expect(try PKCE.generate().verifier.count == 43)
        for bad in [String(repeating: "a", count: 42), String(repeating: "a", count: 129), String(repeating: "a", count: 42) + "+", String(repeating: "é", count: 43)] {
            #expect(throws: OAuthError.invalidPKCEVerifier(reason: "")) { try PKCE(verifier: bad) }
        }
    }

    @Test("RFC 7515 A.3: the ES256 JWS verifies through JWS and a JWKS")
    func rfc7515() throws {
        let file = try Self.vector("rfc7515-a3-es256.json")
        let jws = try JWS(compact: try #require(file["jws"]?.stringValue))
        #expect(jws.algorithm == .es256)
        try jws.verify(with: VerifyingKey(jwk: Self.jwk(file["jwk"])))
        let set = try JWKSet(json: JSONValue.object(["keys": [try #require(file["jwk"])]]).json())
        #expect(try set.key(for: jws) != nil)
    }

    @Test("RFC 7515 A.2: the RS256 JWS verifies; RS256 never fits an EC key")
    func rfc7515RS256() throws {
        let file = try Self.vector("rfc7515-a2-rs256.json")
        let jws = try JWS(compact: try #require(file["jws"]?.stringValue))
        #expect(jws.algorithm == .rs256)
        let key = try VerifyingKey(jwk: Self.jwk(file["jwk"]))
        try jws.verify(with: key)
        #expect(throws: OAuthError.algorithmKeyMismatch(reason: "")) { try jws.verify(with: SigningKey.generate(.es256).publicKey) }
    }

    @Test("RFC 8037 A.4: the Ed25519 JWS is reproduced byte for byte and verifies")
    func rfc8037() throws {
        let file = try Self.vector("rfc8037-a4-ed25519.json")
        let jwkObject = try #require(file["jwk"])
        let key = try SigningKey(ed25519Seed: Base64URL.decode(try #require(jwkObject["d"]?.stringValue)))
        let expected = try #require(file["jws"]?.stringValue)
        // RFC 8037 A.4's header is exactly {"alg":"EdDSA"}: no kid, no typ.
        let signed = try JWS.sign(payload: Data(try #require(file["payload"]?.stringValue).utf8), with: key)
        #expect(signed == expected)
        let jws = try JWS(compact: expected)
        #expect(jws.algorithm == .edDSA)
        try jws.verify(with: key.publicKey)
    }

    @Test("JWS sign and verify round trip; a JWKS skips keys it cannot use")
    func roundTrip() throws {
        for algorithm in SigningAlgorithm.allCases {
            let key = try SigningKey.generate(algorithm)
            let compact = try JWS.sign(payload: Data("{}".utf8), with: key, keyID: "k\"1", type: "JWT")
            let jws = try JWS(compact: compact)
            #expect(jws.keyID == "k\"1" && jws.header["typ"]?.stringValue == "JWT")
            try jws.verify(with: key.publicKey)
        }
        let json = #"{"keys":[{"kty":"oct","k":"c2VjcmV0"},{"kty":"EC","crv":"P-384","x":"AA","y":"AA"},{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","use":"enc"},{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"ok"}]}"#
        let set = try JWKSet(json: Data(json.utf8))
        #expect(set.keys.map(\.keyID) == ["ok"])
        #expect(throws: OAuthError.malformedJWK(reason: "")) { try JWKSet(json: Data(#"{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}"#.utf8)) }
        #expect(throws: OAuthError.malformedJWK(reason: "")) { try JWKSet(json: Data("[]".utf8)) }
    }
}
