#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// TPM2_MakeCredential done in software, by an attestation CA that has no TPM (TPM 2.0
/// Library Part 1 §24, "Credential Protection"; Part 3 §12.6): a secret only the TPM
/// holding a given endorsement key (EK) can recover, and only while the object with a
/// given name (the attestation key) is loaded in that same TPM
/// (``TPM/activateCredential(_:credentialBlob:encryptedSecret:)``). This is how a CA
/// learns that an attestation key sits beside an EK whose certificate it trusts
/// (docs/PROTOCOL.md, "TPM attestation").
///
/// For the RSA 2048 EK of the TCG's default template L-1 (its certificate at NV index
/// 0x01C00002), whose name algorithm is SHA-256 and whose symmetric is AES-128-CFB.
public enum TPMCredentialProtection {
    /// What TPM2_ActivateCredential takes: `TPM2B_ID_OBJECT` and `TPM2B_ENCRYPTED_SECRET`,
    /// each marshalled with its size.
    public struct Challenge: Sendable, Hashable {
        public let credentialBlob: Data
        public let encryptedSecret: Data

        public init(credentialBlob: Data, encryptedSecret: Data) {
            self.credentialBlob = credentialBlob
            self.encryptedSecret = encryptedSecret
        }
    }

    /// The largest credential: a `TPM2B_DIGEST` of the EK's name algorithm, SHA-256.
    public static let maximumCredentialSize = 32

    /// Protects `credential` (1 to 32 bytes) for the TPM whose RSA EK `endorsementKey`
    /// certifies, bound to the object named `objectName` (name algorithm ‖ digest of its
    /// public area).
    public static func makeCredential(_ credential: Data, endorsementKey: X509Certificate, objectName: Data) throws -> Challenge {
        guard (1...maximumCredentialSize).contains(credential.count) else {
            throw CryptoError.invalidParameter(reason: "a TPM credential is 1 to \(maximumCredentialSize) bytes")
        }
        guard objectName.count == 34, objectName.prefix(2) == Data([0x00, 0x0B]) else {
            throw CryptoError.invalidParameter(reason: "the attestation key's name must be SHA-256 (0x000B followed by 32 bytes)")
        }
        guard endorsementKey.owner.rsaModulus()?.count == 256 else {
            throw CryptoError.invalidKey(reason: "the endorsement key certificate does not hold an RSA 2048 key")
        }
        // §24.1 with Annex B.10.3: the seed, encrypted to the EK with OAEP and the label
        // "IDENTITY" (its terminating zero included).
        var seed = try SecureRandom.bytes(count: 32)
        defer { secureZero(&seed) }
        let encryptedSeed = try endorsementKey.owner.encryptRSAOAEP(seed, label: Data("IDENTITY\0".utf8))
        // §24.4: the credential, as a TPM2B_DIGEST, under AES-128-CFB with the key
        // KDFa(seed, "STORAGE", name).
        var symmetricKey = try kdfA(key: seed, label: "STORAGE", contextU: objectName, contextV: Data(), bits: 128)
        defer { secureZero(&symmetricKey) }
        let encryptedIdentity = try OpenSSLCipher.aes128CFB(Self.sized(credential), key: symmetricKey, encrypting: true)
        // §24.5: the outer HMAC over the encrypted credential and the name.
        var integrityKey = try kdfA(key: seed, label: "INTEGRITY", contextU: Data(), contextV: Data(), bits: 256)
        defer { secureZero(&integrityKey) }
        let outerHMAC = try HMAC.authenticationCode(for: encryptedIdentity + objectName, using: SymmetricKey(data: integrityKey))
        return Challenge(
            credentialBlob: sized(sized(outerHMAC) + encryptedIdentity),
            encryptedSecret: sized(encryptedSeed)
        )
    }

    /// KDFa with SHA-256 (TPM 2.0 Part 1 §11.4.10.2; SP 800-108 counter mode over HMAC):
    /// HMAC(key, [i]₃₂ ‖ label ‖ 0x00 ‖ contextU ‖ contextV ‖ [bits]₃₂), i = 1, 2, …
    static func kdfA(key: Data, label: String, contextU: Data, contextV: Data, bits: Int) throws -> Data {
        let prepared = try PreparedHMAC(key: SymmetricKey(data: key), digest: .sha256)
        var output = Data()
        var counter: UInt32 = 1
        while output.count * 8 < bits {
            var message = Data()
            message.append(contentsOf: withUnsafeBytes(of: counter.bigEndian, Array.init))
            message.append(contentsOf: Array(label.utf8) + [0])
            message.append(contextU)
            message.append(contextV)
            message.append(contentsOf: withUnsafeBytes(of: UInt32(bits).bigEndian, Array.init))
            output.append(try prepared.authenticationCode(for: message))
            counter += 1
        }
        return output.prefix(bits / 8)
    }

    /// A TPM2B: the two-byte big-endian size, then the bytes.
    static func sized(_ bytes: Data) -> Data {
        Data([UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)]) + bytes
    }
}
