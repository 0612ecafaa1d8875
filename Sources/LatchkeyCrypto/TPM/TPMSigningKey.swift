#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// An ES256 (P-256) signing key inside a ``TPM``: generated there, used there, kept
/// outside only as its TPM-wrapped blob (``wrappedKey``, PEM "TSS2 PRIVATE KEY"), which
/// is useless without that TPM. The TPM has no Ed25519, so there is no Ed25519 form.
///
/// Each signature loads the blob into the TPM, signs and flushes it again (a TPM has
/// only a few slots for loaded objects), so a signature costs a key load, a primary-key
/// derivation and the signature itself: tens of milliseconds on a hardware TPM
/// (docs/PERFORMANCE.md, "TPM").
public struct TPMSigningKey: Sendable {
    private let tpm: TPM
    /// The wrapped blob to keep.
    public let wrappedKey: Data
    /// The public half, an ordinary software key.
    public let publicKey: VerifyingKey
    /// Always ES256.
    public var algorithm: SigningAlgorithm { .es256 }

    /// A key whose wrapped blob and public key were kept from ``generate(in:)``. Nothing
    /// is sent to the TPM until the first signature, which checks that the blob holds
    /// this public key.
    public init(wrappedKey: Data, publicKey: VerifyingKey, in tpm: TPM) throws {
        guard publicKey.keyType == .p256 else {
            throw CryptoError.invalidKey(reason: "a TPM signing key is P-256")
        }
        self.tpm = tpm
        self.wrappedKey = wrappedKey
        self.publicKey = publicKey
    }

    /// A new key generated inside `tpm`.
    public static func generate(in tpm: TPM) throws -> TPMSigningKey {
        let (publicKey, wrappedKey) = try tpm.generateP256()
        return try TPMSigningKey(wrappedKey: wrappedKey, publicKey: publicKey, in: tpm)
    }

    /// Signs `message` (SHA-256 then ECDSA, in the TPM): an ASN.1 DER `ECDSA-Sig-Value`, as
    /// ``SigningKey`` gives. Throws ``CryptoError/Code/tpmKeyUnusable`` when the TPM cannot
    /// load the blob (another TPM's, or this one was cleared) and
    /// ``CryptoError/Code/tpmUnavailable`` when the TPM does not answer.
    public func signature(for message: Data) throws -> Data {
        let expected = publicKey.spkiDER
        return try tpm.run { context in
            try context.withKey(wrappedKey) { key in
                // The blob carries its public area; a blob for another key is refused
                // before the TPM signs anything with it.
                guard try Data(SPKIPrefix.p256) + context.publicPoint(key).dropFirst() == expected else {
                    throw CryptoError.tpmKeyUnusable(reason: "the TPM key blob holds another key than the one recorded")
                }
                return try context.signES256(key, message)
            }
        }
    }

    /// Loads the blob into the TPM and flushes it again, without signing: whether this
    /// TPM can use the key (for listings that mark keys another TPM made).
    public func checkUsable() throws {
        try tpm.run { context in try context.withKey(wrappedKey) { _ in } }
    }
}
