import Foundation
import LatchkeyCrypto
import Testing

/// The estimate behind the admin token's floor and a new vault's passphrase
/// (docs/SECURITY.md, "Secrets people choose").
@Suite("Secret strength")
struct SecretStrengthTests {
    @Test("what people write is rated by its pattern, not its length", arguments: [
        ("passwordpasswordpasswordpassword", "repeated unit"),
        (String(repeating: "0", count: 40), "repeated character"),
        (String(repeating: "ab", count: 20), "repeated unit"),
        (String(repeating: " ", count: 12), "repeated character"),
        ("aaaaaaaaaaaa", "repeated character"),
        ("123456789012", "sequence"),
        ("qwertyuiopasdfghjkl", "sequence"),
        ("1q2w3e4r5t6y", "keyboard walk"),
        ("1qaz2wsx3edc", "keyboard walk"),
        ("passwordpass", "common word"),
        ("P@ssw0rd1234", "common word"),
        ("Summer2024!!", "year"),
    ])
    func patterns(secret: String, pattern: String) {
        let estimate = SecretStrength.estimate(secret)
        #expect(estimate.bits < 36, "\(secret): \(estimate)")
        #expect(estimate.patterns.contains(pattern), "\(secret): \(estimate)")
    }

    @Test("random secrets keep their bits: 32 bytes as base64url, hex and base64 pass 128 with room, 100 times over")
    func randomSecrets() throws {
        for _ in 0..<100 {
            let bytes = try SecureRandom.bytes(count: 32)
            let encodings = [
                Base64URL.encode(bytes), bytes.map { String(format: "%02x", $0) }.joined(), bytes.base64EncodedString(),
            ]
            for encoded in encodings {
                let estimate = SecretStrength.estimate(encoded)
                #expect(estimate.bits >= 200, "\(encoded): \(estimate)")
            }
        }
    }

    @Test("a passphrase of words people do not share passes; the empty secret has no bits")
    func passphrases() {
        #expect(SecretStrength.estimate("correct horse battery staple").bits >= 36)
        #expect(SecretStrength.estimate("tr0ub4dor&3x").bits >= 36)
        #expect(SecretStrength.estimate("kdjfhgqpwoei").bits >= 36)
        #expect(SecretStrength.estimate("").bits == 0)
    }

    @Test("only the first 256 scalars are read, so a huge secret costs no more to rate")
    func bounded() {
        let huge = String(repeating: "x", count: 1_000_000)
        #expect(SecretStrength.estimate(huge).bits < 20)
    }
}
