#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A vault root key sealed by the host's TPM (``VaultKeySource/tpm``), as the header keeps
/// it (docs/SECURITY.md, "Keys in the TPM").
///
/// How: ECDH with a TPM-resident P-256 key, feeding HKDF-SHA-256, whose output seals the
/// random 32-byte root key with AES-256-GCM. At creation a one-time software key pair
/// stands in for the other party: its private half computes the shared secret with the
/// TPM key's public half and is then dropped; only its public half is kept. To open, the
/// TPM computes the same secret from its private half and that public half
/// (TPM2_ECDH_ZGen, through `EVP_PKEY_derive` with the tpm2 provider).
///
/// Why ECDH rather than RSA-OAEP decryption, the other operation the provider offers: a
/// P-256 key is generated in a TPM in milliseconds where RSA-2048 generation takes
/// seconds on many TPMs, it is the same curve and code path as the device keys, and a
/// P-256 key is available on every TPM 2.0 (PC Client profile) without RSA.
///
/// A copy of the vault is useless without this TPM: the wrapped key blob loads only into
/// the TPM whose storage seed made it, and the shared secret never leaves that TPM except
/// as the input to HKDF in this process.
struct TPMSealedVaultKey: Codable, Sendable {
    /// base64url of the TPM-wrapped key blob (PEM "TSS2 PRIVATE KEY").
    var wrappedKey: String
    /// base64url SubjectPublicKeyInfo of the one-time key's public half.
    var peerKey: String
    /// base64url HKDF salt (16 random bytes).
    var salt: String
    /// base64url nonce ‖ ciphertext ‖ tag of the root key.
    var sealedRoot: String

    private static let info = Data("latchkey vault root key sealed by the TPM v1".utf8)
    private static let associatedData = Data("latchkey vault root key".utf8)

    /// A new random root key, sealed by the TPM.
    static func create() throws -> (TPMSealedVaultKey, SymmetricKey) {
        let tpm: TPM
        let tpmKey: (publicKey: VerifyingKey, wrappedKey: Data)
        do {
            tpm = try TPM.system()
            tpmKey = try tpm.generateP256()
        } catch let error as CryptoError {
            throw KeyVaultError(tpm: error)
        }
        let oneTime = try SigningKey.generate(.es256)
        var shared = try OpenSSLKeys.sharedSecret(oneTime.context.key, peer: tpmKey.publicKey.key)
        defer { secureZero(&shared) }
        let salt = try SecureRandom.bytes(count: 16)
        let root = SymmetricKey(data: try SecureRandom.bytes(count: VaultKeySource.rawKeyByteCount))
        let box = try root.withUnsafeBytes { bytes in
            var plaintext = Data(bytes)
            defer { secureZero(&plaintext) }
            return try AESGCM.seal(plaintext, using: wrappingKey(shared, salt: salt), authenticating: associatedData)
        }
        let sealed = TPMSealedVaultKey(
            wrappedKey: Base64URL.encode(tpmKey.wrappedKey),
            peerKey: Base64URL.encode(oneTime.publicKey.spkiDER),
            salt: Base64URL.encode(salt),
            sealedRoot: Base64URL.encode(box.nonce + box.ciphertext + box.tag)
        )
        // The vault must open before it is written: a TPM that made the key but cannot use
        // it (a policy, a broken provider) would otherwise leave a vault nothing opens.
        guard let check = try? sealed.unseal(), check == root else {
            throw KeyVaultError.tpmUnavailable(reason: "the TPM sealed a vault key it cannot unseal again; nothing was created")
        }
        return (sealed, root)
    }

    /// The root key, unsealed by this host's TPM. ``KeyVaultError/Code/wrongTPM`` when this
    /// is not the TPM that sealed it (or it was cleared since), ``KeyVaultError/Code/tpmUnavailable``
    /// when none answers, ``KeyVaultError/Code/wrongKey`` when the header was altered.
    func unseal() throws -> SymmetricKey {
        guard let blob = try? Base64URL.decode(wrappedKey), let peerDER = try? Base64URL.decode(peerKey),
              let peer = try? VerifyingKey(spkiDER: peerDER), peer.keyType == .p256,
              let salt = try? Base64URL.decode(salt), let sealed = try? Base64URL.decode(sealedRoot),
              sealed.count == AESGCM.nonceByteCount + VaultKeySource.rawKeyByteCount + AESGCM.tagByteCount
        else {
            throw KeyVaultError.notAVault(reason: "the vault header's TPM-sealed key is malformed")
        }
        var shared: Data
        do {
            shared = try TPM.system().sharedSecret(wrappedKey: blob, peer: peer)
        } catch let error as CryptoError {
            throw KeyVaultError(tpm: error)
        }
        defer { secureZero(&shared) }
        let box = AESGCM.SealedBox(
            nonce: sealed.prefix(AESGCM.nonceByteCount),
            ciphertext: sealed.dropFirst(AESGCM.nonceByteCount).dropLast(AESGCM.tagByteCount),
            tag: sealed.suffix(AESGCM.tagByteCount)
        )
        guard var root = try? AESGCM.open(box, using: Self.wrappingKey(shared, salt: salt), authenticating: Self.associatedData) else {
            throw KeyVaultError.wrongKey(reason: "the TPM-sealed vault key does not unseal (the vault header was altered)")
        }
        defer { secureZero(&root) }
        return SymmetricKey(data: root)
    }

    private static func wrappingKey(_ shared: Data, salt: Data) throws -> SymmetricKey {
        try HKDF.deriveKey(inputKeyMaterial: SymmetricKey(data: shared), salt: salt, info: info, outputByteCount: 32)
    }
}
