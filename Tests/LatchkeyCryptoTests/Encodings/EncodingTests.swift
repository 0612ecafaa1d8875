import Foundation
@testable import LatchkeyCrypto
import Testing

@Suite("base64url, PEM, JWK")
struct EncodingTests {
    @Test("base64url round trips every length; RFC 4648 §10 values")
    func base64url() throws {
        for length in 0..<70 {
            let bytes = try SecureRandom.bytes(count: length)
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(try Base64URL.decode(text) == bytes)
            #expect(text == bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: ""))
        }
        for (plain, encoded) in [("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy")] {
            #expect(Base64URL.encode(Data(plain.utf8)) == encoded)
        }
    }

    @Test("base64url decoding is strict")
    func base64urlStrict() {
        for bad in ["Zg==", "Zm9v+", "Zm9v/", "Zm 9v", "Zm9v\n", "Z", "Zm9vY", "é"] {
            #expect(throws: CryptoError(code: .invalidEncoding), "\(bad)") { try Base64URL.decode(bad) }
        }
        // "Zh" carries non-zero bits after the one byte it encodes.
        #expect(throws: CryptoError(code: .invalidEncoding)) { try Base64URL.decode("Zh") }
    }

    @Test("PEM: one block with the expected label only")
    func pem() throws {
        let der = try SecureRandom.bytes(count: 100)
        let text = PEMDocument(label: "PUBLIC KEY", der: der).pemString
        #expect(try PEMDocument(parsing: text, expectedLabel: "PUBLIC KEY").der == der)
        #expect(try PEMDocument(parsing: "\n  " + text.replacingOccurrences(of: "\n", with: "\r\n") + "\n", expectedLabel: "PUBLIC KEY").der == der)
        #expect(throws: CryptoError(code: .invalidEncoding)) { try PEMDocument(parsing: text, expectedLabel: "PRIVATE KEY") }
        #expect(throws: CryptoError(code: .invalidEncoding)) { try PEMDocument(parsing: text + text, expectedLabel: "PUBLIC KEY") }
        #expect(throws: CryptoError(code: .invalidEncoding)) { try PEMDocument(parsing: "junk" + text, expectedLabel: "PUBLIC KEY") }
        #expect(throws: CryptoError(code: .invalidEncoding)) { try PEMDocument(parsing: "-----BEGIN PUBLIC KEY----------END PUBLIC KEY-----x", expectedLabel: "PUBLIC KEY") }
    }

    @Test("JWK thumbprint refuses missing or hostile members")
    func jwkThumbprint() {
        #expect(throws: CryptoError(code: .invalidKey)) { try JSONWebKey(kty: "EC", crv: "P-256", x: "AA").thumbprint() }
        #expect(throws: CryptoError(code: .invalidKey)) { try JSONWebKey(kty: "OKP", crv: "Ed25519", x: "A\",\"kty\":\"x").thumbprint() }
        #expect(throws: CryptoError(code: .unsupportedAlgorithm)) { try JSONWebKey(kty: "oct").thumbprint() }
    }

    @Test("JWK JSON ignores private and unknown members")
    func jwkDecoding() throws {
        let json = #"{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","d":"secret","extra":1}"#
        let jwk = try JSONDecoder().decode(JSONWebKey.self, from: Data(json.utf8))
        let encoded = String(decoding: try JSONEncoder().encode(jwk), as: UTF8.self)
        #expect(!encoded.contains("secret") && !encoded.contains("\"d\""))
        #expect(try VerifyingKey(jwk: jwk).keyType == .ed25519)
    }
}
