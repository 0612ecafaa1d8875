import Foundation
@testable import LatchkeyCrypto
import Testing
import LatchkeyTestSupport

@Suite("AEAD, MAC, KDF, randomness")
struct SymmetricTests {
    @Test("AES-256-GCM: wrong key, nonce, tag, AAD or ciphertext all fail with authenticationFailure")
    func gcmTampering() throws {
        let key = try SymmetricKey.random()
        let aad = Data("handle-1".utf8)
        let box = try AESGCM.seal(Data("secret".utf8), using: key, authenticating: aad)
        #expect(box.nonce.count == 12 && box.tag.count == 16)
        #expect(try AESGCM.open(box, using: key, authenticating: aad) == Data("secret".utf8))
        #expect(try AESGCM.open(AESGCM.SealedBox(combined: box.combined), using: key, authenticating: aad) == Data("secret".utf8))

        var wrongNonce = box
        wrongNonce.nonce[0] ^= 1
        var wrongTag = box
        wrongTag.tag[15] ^= 1
        var wrongCiphertext = box
        wrongCiphertext.ciphertext[0] ^= 1
        let cases: [(String, AESGCM.SealedBox, SymmetricKey, Data)] = [
            ("wrong key", box, try SymmetricKey.random(), aad),
            ("wrong nonce", wrongNonce, key, aad),
            ("wrong tag", wrongTag, key, aad),
            ("wrong ciphertext", wrongCiphertext, key, aad),
            ("wrong aad", box, key, Data("handle-2".utf8)),
            ("missing aad", box, key, Data()),
        ]
        for (name, candidate, candidateKey, candidateAAD) in cases {
            #expect(throws: CryptoError(code: .authenticationFailure), "\(name)") {
                try AESGCM.open(candidate, using: candidateKey, authenticating: candidateAAD)
            }
        }
        var shortTag = box
        shortTag.tag = box.tag.prefix(12)
        #expect(throws: CryptoError(code: .authenticationFailure)) { try AESGCM.open(shortTag, using: key, authenticating: aad) }
        #expect(throws: CryptoError(code: .invalidParameter)) { try AESGCM.seal(Data(), using: SymmetricKey(data: Data(count: 16))) }
        #expect(throws: CryptoError(code: .invalidParameter)) { try AESGCM.seal(Data(), using: key, nonce: Data()) }
        #expect(throws: CryptoError(code: .invalidParameter)) { try AESGCM.SealedBox(combined: Data(count: 27)) }
        #expect(OpenSSLErrorQueue.drain().isEmpty)
    }

    @Test("HKDF refuses output over 255 hash lengths and oversized info")
    func hkdfBounds() throws {
        let ikm = SymmetricKey(data: Data(count: 32))
        #expect(throws: CryptoError(code: .invalidParameter)) { try HKDF.deriveKey(inputKeyMaterial: ikm, outputByteCount: 255 * 32 + 1) }
        #expect(throws: CryptoError(code: .invalidParameter)) { try HKDF.deriveKey(inputKeyMaterial: ikm, outputByteCount: 0) }
        #expect(throws: CryptoError(code: .invalidParameter)) { try HKDF.deriveKey(inputKeyMaterial: ikm, info: Data(count: 1025), outputByteCount: 32) }
        #expect(try HKDF.deriveKey(inputKeyMaterial: ikm, outputByteCount: 255 * 32).byteCount == 255 * 32)
    }

    @Test("scrypt parameters from a hostile file are refused before any work")
    func scryptBounds() throws {
        let refused: [Scrypt.Parameters] = [
            .init(costFactor: 0, blockSize: 8, parallelism: 1),
            .init(costFactor: 1, blockSize: 8, parallelism: 1),
            .init(costFactor: 1000, blockSize: 8, parallelism: 1),
            .init(costFactor: 1 << 21, blockSize: 8, parallelism: 1),
            .init(costFactor: 1 << 20, blockSize: 16, parallelism: 1),
            .init(costFactor: 16, blockSize: 0, parallelism: 1),
            .init(costFactor: 16, blockSize: 8, parallelism: 0),
            .init(costFactor: 16, blockSize: 8, parallelism: 1000),
            .init(costFactor: .max, blockSize: .max, parallelism: .max),
        ]
        for parameters in refused {
            #expect(throws: CryptoError(code: .invalidParameter), "\(parameters)") {
                try Scrypt.deriveKey(password: Data("p".utf8), salt: Data("s".utf8), parameters: parameters)
            }
        }
        #expect(throws: Never.self) { try Scrypt.Parameters.interactive.validate() }
    }

    @Test("HMAC refuses truncated and wrong codes; keys compare in constant time and never print")
    func hmacAndKeys() throws {
        let key = try SymmetricKey.random()
        let mac = try HMAC.authenticationCode(for: Data("m".utf8), using: key)
        #expect(HMAC.isValidAuthenticationCode(mac, for: Data("m".utf8), using: key))
        #expect(!HMAC.isValidAuthenticationCode(mac.prefix(16), for: Data("m".utf8), using: key))
        #expect(!HMAC.isValidAuthenticationCode(mac, for: Data("n".utf8), using: key))
        #expect(key == SymmetricKey(data: key.withUnsafeBytes { Data($0) }))
        #expect(key != (try SymmetricKey.random()))
        #expect(!"\(key)".contains(key.withUnsafeBytes { Data($0) }.hex))
        #expect("\(key)".contains("redacted"))
    }

    @Test("random bytes differ, counts are bounded, uniform draws stay in range")
    func randomness() throws {
        #expect(try SecureRandom.bytes(count: 32) != SecureRandom.bytes(count: 32))
        #expect(try SecureRandom.bytes(count: 0).isEmpty)
        #expect(throws: CryptoError(code: .invalidParameter)) { try SecureRandom.bytes(count: -1) }
        for _ in 0..<1000 { #expect(try SecureRandom.uniform(below: 32) < 32) }
        #expect(ConstantTime.isEqual(Data([1, 2]), [UInt8]([1, 2])))
        #expect(!ConstantTime.isEqual(Data([1, 2]), Data([1, 3])))
        #expect(!ConstantTime.isEqual(Data([1, 2]), Data([1, 2, 3])))
        #expect(ConstantTime.isEqual(Data(), Data()))
    }
}
