import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import Testing
import LatchkeyTestSupport

/// Project Wycheproof (C2SP) vectors from ../shared/vectors/wycheproof, never copied into
/// the repository. Every `valid` case must be accepted and every `invalid` one rejected;
/// `acceptable` cases (legacy encodings) may go either way. Each failure names its tcId.
@Suite("Wycheproof", .requires(if: TestData.wycheproofAvailable, "Wycheproof vectors not found at ../shared/vectors/wycheproof: skipped"))
struct WycheproofTests {
    /// Tallies the cases of one file and prints the count, so the log shows how many ran.
    struct Tally {
        let file: String
        var valid = 0
        var invalid = 0
        var acceptable = 0

        mutating func count(_ result: String) {
            switch result {
            case "valid": valid += 1
            case "invalid": invalid += 1
            default: acceptable += 1
            }
        }

        func report() {
            print("Wycheproof \(file): \(valid + invalid + acceptable) cases ran (\(valid) valid, \(invalid) invalid, \(acceptable) acceptable)")
        }
    }

    /// Runs `check` on every test of `file`, expecting its verdict to match the result.
    private func run(
        _ file: String,
        expectCases: Int,
        _ check: (JSONValue, JSONValue) throws -> Bool
    ) throws {
        let document = try TestData.json(TestData.wycheproof.appendingPathComponent(file))
        var tally = Tally(file: file)
        for group in try document.objects("testGroups") {
            for test in try group.objects("tests") {
                let id = try test.int("tcId")
                let result = try test.string("result")
                tally.count(result)
                let accepted = (try? check(group, test)) ?? false
                switch result {
                case "valid": #expect(accepted, "\(file) tcId \(id) (valid) was rejected: \(test["comment"] ?? "")")
                case "invalid": #expect(!accepted, "\(file) tcId \(id) (invalid) was accepted: \(test["comment"] ?? "")")
                default: break
                }
            }
        }
        tally.report()
        #expect(tally.valid + tally.invalid + tally.acceptable == expectCases, "\(file): case count")
    }

    @Test("ECDSA P-256 SHA-256, DER signatures")
    func ecdsaDER() throws {
        var keys: [String: VerifyingKey] = [:]
        try run("ecdsa_secp256r1_sha256_test.json", expectCases: 484) { group, test in
            let der = try group.string("publicKeyDer")
            let key = try keys[der] ?? VerifyingKey(spkiDER: Data(hex: der))
            keys[der] = key
            return key.isValidSignature(try test.hex("sig"), for: try test.hex("msg"))
        }
    }

    @Test("ECDSA P-256 SHA-256, P1363 (r ‖ s) signatures via ECDSASignature")
    func ecdsaP1363() throws {
        try run("ecdsa_secp256r1_sha256_p1363_test.json", expectCases: 262) { group, test in
            let key = try VerifyingKey(spkiDER: Data(hex: group.string("publicKeyDer")))
            let signature = try ECDSASignature(rawRepresentation: test.hex("sig"))
            return key.isValidSignature(signature.derRepresentation, for: try test.hex("msg"))
        }
    }

    @Test("Ed25519")
    func ed25519() throws {
        try run("ed25519_test.json", expectCases: 151) { group, test in
            let key = try VerifyingKey(spkiDER: Data(hex: group.string("publicKeyDer")))
            return key.isValidSignature(try test.hex("sig"), for: try test.hex("msg"))
        }
    }

    @Test("RSASSA-PKCS1-v1_5 2048 SHA-256 (RS256)")
    func rsa() throws {
        try run("rsa_signature_2048_sha256_test.json", expectCases: 259) { group, test in
            let key = try VerifyingKey(spkiDER: Data(hex: group.string("publicKeyDer")))
            return key.isValidSignature(try test.hex("sig"), for: try test.hex("msg"))
        }
    }

    @Test("AES-GCM with 256-bit keys")
    func aesGCM() throws {
        try run("aes_gcm_test.json", expectCases: 316) { group, test in
            // Other key sizes are outside AES-256-GCM: the API must refuse them.
            let key = SymmetricKey(data: try test.hex("key"))
            guard try group.int("keySize") == 256 else {
                #expect(throws: CryptoError(code: .invalidParameter)) {
                    _ = try AESGCM.open(.init(nonce: test.hex("iv"), ciphertext: test.hex("ct"), tag: test.hex("tag")), using: key)
                }
                return try test.string("result") == "valid"
            }
            let box = AESGCM.SealedBox(nonce: try test.hex("iv"), ciphertext: try test.hex("ct"), tag: try test.hex("tag"))
            guard box.nonce.count <= AESGCM.maximumNonceByteCount else {
                // Refused by design, with its own error: OpenSSL's GCM takes at most
                // 128-byte nonces (Wycheproof's "LongIv" cases go to 257 bytes).
                #expect(throws: CryptoError(code: .invalidParameter)) { _ = try AESGCM.open(box, using: key) }
                print("Wycheproof aes_gcm_test.json tcId \(try test.int("tcId")): \(box.nonce.count)-byte nonce refused by design (limit \(AESGCM.maximumNonceByteCount))")
                return try test.string("result") == "valid"
            }
            let opened = try AESGCM.open(box, using: key, authenticating: test.hex("aad"))
            let sealed = try AESGCM.seal(opened, using: key, nonce: box.nonce, authenticating: test.hex("aad"))
            return opened == (try test.hex("msg")) && sealed == box
        }
    }

    @Test("HKDF-SHA-256")
    func hkdf() throws {
        try run("hkdf_sha256_test.json", expectCases: 86) { _, test in
            let okm = try HKDF.deriveKey(
                inputKeyMaterial: SymmetricKey(data: test.hex("ikm")),
                salt: test.hex("salt"),
                info: test.hex("info"),
                outputByteCount: test.int("size")
            )
            return okm.withUnsafeBytes { Data($0) } == (try test.hex("okm"))
        }
    }

    @Test("HMAC-SHA-256, full and truncated tags")
    func hmac() throws {
        try run("hmac_sha256_test.json", expectCases: 174) { group, test in
            let key = SymmetricKey(data: try test.hex("key"))
            let tag = try test.hex("tag")
            let message = try test.hex("msg")
            let tagByteCount = try group.int("tagSize") / 8
            guard tagByteCount == 32 else {
                // Truncated tags: a protocol-defined prefix compared in constant time.
                let full = try HMAC.authenticationCode(for: message, using: key)
                return tag.count == tagByteCount && ConstantTime.isEqual(full.prefix(tag.count), tag)
            }
            return HMAC.isValidAuthenticationCode(tag, for: message, using: key)
        }
    }
}
