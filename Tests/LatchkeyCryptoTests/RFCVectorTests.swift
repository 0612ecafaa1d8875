import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import Testing
import LatchkeyTestSupport

/// The published vectors under Vectors/, each file naming its RFC section.
@Suite("RFC and NIST vectors")
struct RFCVectorTests {
    @Test("RFC 7636 App. B: S256 code challenge")
    func pkce() throws {
        for vector in try TestData.vector("rfc7636-pkce.json").objects("cases") {
            let id = try vector.string("id")
            let verifier = try vector.string("codeVerifier")
            let challenge = Base64URL.encode(try DigestAlgorithm.sha256.hash(Data(verifier.utf8)))
            #expect(challenge == (try vector.string("codeChallenge")), "case \(id)")
        }
    }

    @Test("RFC 4231: HMAC-SHA-256 cases 1-7, one-shot and with a prepared key")
    func hmac() throws {
        let cases = try TestData.vector("rfc4231-hmac-sha256.json").objects("cases")
        #expect(cases.count == 7)
        for vector in cases {
            let id = try vector.string("id")
            let key = SymmetricKey(data: try vector.hex("key"))
            let expected = try vector.hex("mac")
            let mac = try HMAC.authenticationCode(for: vector.hex("data"), using: key)
            #expect(mac.prefix(expected.count) == expected, "\(id)")
            // A prepared key gives the same code, every time it is used.
            let prepared = try HMAC.PreparedKey(key)
            for _ in 0..<2 {
                #expect(try prepared.authenticationCode(for: vector.hex("data")).prefix(expected.count) == expected, "\(id), prepared")
            }
            if expected.count == 32 {
                #expect(HMAC.isValidAuthenticationCode(expected, for: try vector.hex("data"), using: key))
            }
        }
    }

    @Test("RFC 5869 A.1-A.3: HKDF-SHA-256")
    func hkdf() throws {
        let cases = try TestData.vector("rfc5869-hkdf-sha256.json").objects("cases")
        #expect(cases.count == 3)
        for vector in cases {
            let id = try vector.string("id")
            let okm = try HKDF.deriveKey(
                inputKeyMaterial: SymmetricKey(data: vector.hex("ikm")),
                salt: vector.hex("salt"),
                info: vector.hex("info"),
                outputByteCount: vector.int("length")
            )
            #expect(okm.withUnsafeBytes { Data($0) } == (try vector.hex("okm")), "\(id)")
        }
    }

    @Test("RFC 7914 §12: scrypt")
    func scrypt() throws {
        let cases = try TestData.vector("rfc7914-scrypt.json").objects("cases")
        #expect(cases.count == 3)
        for vector in cases {
            let id = try vector.string("id")
            let parameters = Scrypt.Parameters(
                costFactor: UInt64(try vector.int("N")),
                blockSize: UInt32(try vector.int("r")),
                parallelism: UInt32(try vector.int("p"))
            )
            let derived = try Scrypt.deriveKey(
                password: Data(try vector.string("password").utf8),
                salt: Data(try vector.string("salt").utf8),
                parameters: parameters,
                outputByteCount: vector.int("length")
            )
            #expect(derived.withUnsafeBytes { Data($0) } == (try vector.hex("derived")), "\(id)")
        }
    }

    @Test("NIST GCM spec test cases 13-16: AES-256-GCM")
    func aesGCM() throws {
        let cases = try TestData.vector("nist-gcm-aes256.json").objects("cases")
        #expect(cases.count == 4)
        for vector in cases {
            let id = try vector.string("id")
            let key = SymmetricKey(data: try vector.hex("key"))
            let box = try AESGCM.seal(vector.hex("plaintext"), using: key, nonce: vector.hex("nonce"), authenticating: vector.hex("aad"))
            #expect(box.ciphertext == (try vector.hex("ciphertext")), "\(id)")
            #expect(box.tag == (try vector.hex("tag")), "\(id)")
            let opened = try AESGCM.open(box, using: key, authenticating: vector.hex("aad"))
            #expect(opened == (try vector.hex("plaintext")), "\(id)")
        }
    }

    @Test("RFC 6979 A.2.5: P-256 SHA-256 signatures verify")
    func rfc6979() throws {
        let file = try TestData.vector("rfc6979-p256-sha256.json")
        let point = try file.object("publicKey")
        let key = try VerifyingKey(p256X: point.hex("x"), y: point.hex("y"))
        for vector in try file.objects("cases") {
            let id = try vector.string("id")
            let raw = try vector.hex("r") + vector.hex("s")
            let signature = try ECDSASignature(rawRepresentation: raw)
            let message = Data(try vector.string("message").utf8)
            #expect(key.isValidSignature(signature.derRepresentation, for: message), "\(id)")
            #expect(!key.isValidSignature(signature.derRepresentation, for: Data("other".utf8)))
        }
    }

    @Test("RFC 7515 A.3: ES256 JWS verifies")
    func rfc7515() throws {
        let file = try TestData.vector("rfc7515-a3-es256.json")
        let jwk = try JSONDecoder().decode(JSONWebKey.self, from: file.object("jwk").json())
        let key = try VerifyingKey(jwk: jwk)
        let parts = try file.string("jws").split(separator: ".")
        #expect(parts.count == 3)
        let signingInput = Data("\(parts[0]).\(parts[1])".utf8)
        let signature = try ECDSASignature(rawRepresentation: Base64URL.decode(parts[2]))
        #expect(key.isValidSignature(signature.derRepresentation, for: signingInput))
        // The raw form alone is not DER and must not verify.
        #expect(!key.isValidSignature(signature.rawRepresentation, for: signingInput))
        #expect(try key.jwk.x == jwk.x && key.jwk.y == jwk.y)
    }

    @Test("RFC 8037 A.4: Ed25519 JWS signs byte-exactly and verifies; A.3 thumbprint")
    func rfc8037() throws {
        let file = try TestData.vector("rfc8037-a4-ed25519.json")
        let jwk = try file.object("jwk")
        let key = try SigningKey(ed25519Seed: Base64URL.decode(jwk.string("d")))
        #expect(try key.publicKey.jwk.x == (try jwk.string("x")))
        let parts = try file.string("jws").split(separator: ".")
        let signingInput = Data("\(parts[0]).\(parts[1])".utf8)
        #expect(try Base64URL.decode(parts[1]) == Data(try file.string("payload").utf8))
        let signature = try key.signature(for: signingInput)
        #expect(Base64URL.encode(signature) == String(parts[2]))
        let publicKey = try VerifyingKey(jwk: JSONWebKey(kty: "OKP", crv: "Ed25519", x: jwk.string("x")))
        #expect(publicKey.isValidSignature(signature, for: signingInput))
        #expect(try publicKey.jwk.thumbprint() == (try file.string("thumbprint")))
    }

    @Test("RFC 7638 §3.1: JWK thumbprint")
    func rfc7638() throws {
        let file = try TestData.vector("rfc7638-thumbprint.json")
        let jwk = try JSONDecoder().decode(JSONWebKey.self, from: file.object("jwk").json())
        #expect(try jwk.thumbprint() == (try file.string("thumbprint")))
        // The thumbprint is of the key, so importing and re-exporting keeps it.
        let key = try VerifyingKey(jwk: jwk)
        #expect(key.keyType == .rsa)
        #expect(try key.jwk.thumbprint() == (try file.string("thumbprint")))
    }
}
