import Foundation
@testable import LatchkeyCrypto
import Testing
import LatchkeyTestSupport

@Suite("Signing and verifying keys")
struct SigningKeyTests {
    static let algorithms = SigningAlgorithm.allCases

    @Test("generate, sign, verify; a changed message or signature fails", arguments: algorithms)
    func roundTrip(_ algorithm: SigningAlgorithm) throws {
        let key = try SigningKey.generate(algorithm)
        #expect(key.algorithm == algorithm)
        let message = Data("challenge".utf8)
        let signature = try key.signature(for: message)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        #expect(!key.publicKey.isValidSignature(signature, for: Data("challengE".utf8)))
        var tampered = signature
        tampered[tampered.count - 1] ^= 0x01
        #expect(!key.publicKey.isValidSignature(tampered, for: message))
        #expect(!key.publicKey.isValidSignature(Data(), for: message))
        #expect(!key.publicKey.isValidSignature(Data(repeating: 0, count: 100_000), for: message))
        #expect(OpenSSLErrorQueue.drain().isEmpty, "a failed verification leaves OpenSSL's error queue empty")
        if algorithm == .ed25519 {
            #expect(signature.count == 64)
        } else {
            #expect(throws: Never.self) { try ECDSASignature(derRepresentation: signature) }
        }
    }

    @Test("PKCS#8, PEM, SPKI and JWK round trips keep the key", arguments: algorithms)
    func encodings(_ algorithm: SigningAlgorithm) throws {
        let key = try SigningKey.generate(algorithm)
        let message = Data("m".utf8)
        let reparsed = try SigningKey(pkcs8DER: key.pkcs8DERRepresentation)
        #expect(reparsed.algorithm == algorithm)
        #expect(reparsed.publicKey == key.publicKey)
        #expect(key.publicKey.isValidSignature(try reparsed.signature(for: message), for: message))

        let pem = try key.withPKCS8DER { PEMDocument(label: "PRIVATE KEY", der: Data($0)).pemString }
        #expect(try SigningKey(pemRepresentation: pem).publicKey == key.publicKey)

        let spki = key.publicKey.spkiDER
        #expect(spki.count == (algorithm == .es256 ? 91 : 44))
        #expect(try VerifyingKey(spkiDER: spki) == key.publicKey)
        #expect(try VerifyingKey(pemRepresentation: key.publicKey.pemRepresentation) == key.publicKey)
        #expect(try VerifyingKey(jwk: key.publicKey.jwk) == key.publicKey)
        #expect(try key.publicKey.jwk.thumbprint().count == 43)
    }

    @Test("keys are shared safely across concurrent tasks")
    func concurrentUse() async throws {
        let key = try SigningKey.generate(.es256)
        let publicKey = key.publicKey
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let message = Data("message \(index)".utf8)
                    var valid = true
                    for _ in 0..<20 {
                        let signature = try key.signature(for: message)
                        valid = valid && publicKey.isValidSignature(signature, for: message)
                    }
                    return valid
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 64 && results.allSatisfy { $0 })
    }

    @Test("hostile SubjectPublicKeyInfo bytes give typed errors")
    func hostileSPKI() throws {
        let good = try SigningKey.generate(.es256).publicKey.spkiDER
        let cases: [(String, Data)] = [
            ("empty", Data()),
            ("truncated", good.dropLast(1)),
            ("trailing byte", good + [0x00]),
            ("garbage", Data(repeating: 0x41, count: 91)),
            ("oversized", Data(repeating: 0x30, count: 1 << 20)),
            ("only the prefix", Data(SPKIPrefix.p256)),
        ]
        for (name, bytes) in cases {
            #expect(throws: CryptoError(code: .invalidKey), "\(name)") { try VerifyingKey(spkiDER: bytes) }
        }
        // A point off the curve: flip a bit of y.
        var offCurve = good
        offCurve[offCurve.count - 1] ^= 0x01
        #expect(throws: CryptoError(code: .invalidKey)) { try VerifyingKey(spkiDER: offCurve) }
        #expect(OpenSSLErrorQueue.drain().isEmpty)
    }

    @Test("a key kept as SPKI bytes is imported on first use; an off-curve point never verifies")
    func deferredKeys() throws {
        let key = try SigningKey.generate(.es256)
        let message = Data("m".utf8)
        let deferred = try VerifyingKey(deferredSPKI: key.publicKey.spkiDER)
        #expect(deferred == key.publicKey && deferred.keyType == .p256)
        #expect(deferred.isValidSignature(try key.signature(for: message), for: message))
        var offCurve = key.publicKey.spkiDER
        offCurve[offCurve.count - 1] ^= 1
        let broken = try VerifyingKey(deferredSPKI: offCurve)
        #expect(!broken.isValidSignature(try key.signature(for: message), for: message))
        #expect(throws: CryptoError(code: .invalidKey)) { try VerifyingKey(deferredSPKI: Data(count: 91)) }
        #expect(OpenSSLErrorQueue.drain().isEmpty)
    }

    @Test("unsupported key types are refused with their own code")
    func unsupportedKeys() throws {
        // secp384r1 public key SPKI prefix with a dummy point is refused before use;
        // an X25519 SPKI (RFC 8410) is a well-formed key of the wrong kind.
        let x25519 = try Data(hex: "302a300506032b656e032100") + Data(repeating: 9, count: 32)
        #expect(throws: CryptoError(code: .unsupportedAlgorithm)) { try VerifyingKey(spkiDER: x25519) }
        #expect(throws: CryptoError(code: .unsupportedAlgorithm)) {
            try VerifyingKey(jwk: JSONWebKey(kty: "EC", crv: "P-384", x: "AA", y: "AA"))
        }
        #expect(throws: CryptoError(code: .invalidKey)) {
            try VerifyingKey(jwk: JSONWebKey(kty: "EC", crv: "P-256", x: Base64URL.encode(Data(count: 31)), y: Base64URL.encode(Data(count: 32))))
        }
        #expect(throws: CryptoError(code: .invalidKey)) {
            try VerifyingKey(rsaModulus: Data(repeating: 0xFF, count: 128), exponent: Data([1, 0, 1]))
        }
    }

    @Test("hostile PKCS#8 and PEM give typed errors")
    func hostilePrivateKeys() throws {
        let der = try SigningKey.generate(.es256).pkcs8DERRepresentation
        #expect(throws: CryptoError(code: .invalidKey)) { try SigningKey(pkcs8DER: Data()) }
        #expect(throws: CryptoError(code: .invalidKey)) { try SigningKey(pkcs8DER: der.dropLast(3)) }
        #expect(throws: CryptoError(code: .invalidKey)) { try SigningKey(pkcs8DER: der + [0]) }
        #expect(throws: CryptoError(code: .invalidKey)) { try SigningKey(pkcs8DER: Data(repeating: 0x30, count: 20_000)) }
        #expect(throws: CryptoError(code: .invalidEncoding)) { try SigningKey(pemRepresentation: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----") }
        #expect(throws: CryptoError(code: .invalidEncoding)) { try SigningKey(pemRepresentation: "-----BEGIN PRIVATE KEY-----\n!!!!\n-----END PRIVATE KEY-----") }
        #expect(throws: CryptoError(code: .invalidEncoding)) { try SigningKey(pemRepresentation: String(repeating: "A", count: 100_000)) }
        #expect(throws: CryptoError(code: .invalidKey)) { try SigningKey(ed25519Seed: Data(count: 31)) }
        #expect(OpenSSLErrorQueue.drain().isEmpty)
    }

    @Test("ECDSA signatures convert between DER and r ‖ s; non-canonical DER is refused")
    func ecdsaSignatureEncoding() throws {
        let raw = Data(repeating: 0x80, count: 32) + Data(repeating: 0x01, count: 32)
        let signature = try ECDSASignature(rawRepresentation: raw)
        let der = signature.derRepresentation
        #expect(der.count == 2 + 35 + 34)
        #expect(try ECDSASignature(derRepresentation: der).rawRepresentation == raw)

        let small = try ECDSASignature(rawRepresentation: Data(count: 31) + [5] + Data(count: 31) + [7])
        #expect(small.derRepresentation == (try Data(hex: "3006020105020107")))

        let malformed: [(String, String)] = [
            ("empty", ""),
            ("wrong tag", "3106020105020107"),
            ("trailing byte", "300602010502010700"),
            ("negative r", "3006020185020107"),
            ("non-minimal r", "300702020005020107"),
            ("long-form short length", "30810602010502010700"),
            ("three integers", "3009020105020107020101"),
            ("truncated", "30060201050201"),
            ("r too long", "3026022201" + String(repeating: "01", count: 33) + "020107"),
        ]
        for (name, hex) in malformed {
            #expect(throws: CryptoError(code: .invalidSignatureEncoding), "\(name)") {
                try ECDSASignature(derRepresentation: Data(hex: hex))
            }
        }
        #expect(throws: CryptoError(code: .invalidSignatureEncoding)) { try ECDSASignature(rawRepresentation: Data(count: 63)) }
    }
}
