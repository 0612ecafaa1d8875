#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What a ``KeyVault`` holds about one key, less the private key itself.
///
/// The public key is imported into OpenSSL only when it is first used to verify: a
/// listing of thousands of entries should not pay for thousands of key imports.
public struct VaultEntry: Hashable, Sendable {
    public let handle: KeyHandle
    public let algorithm: SigningAlgorithm
    /// The public key.
    public let publicKey: VerifyingKey
    /// The caller's metadata, integrity-protected by the vault.
    public let metadata: Data
    public let createdAt: Date
    public let updatedAt: Date
    /// Where the private key lives: in the vault file, or in the TPM.
    public let protection: KeyProtection

    /// An entry described by someone else (a key agent's answer): `publicKeyDER` must be
    /// the one DER form of a P-256 or Ed25519 SubjectPublicKeyInfo, else
    /// ``CryptoError/Code/invalidKey``; it is imported into OpenSSL on first use.
    public init(
        handle: KeyHandle, algorithm: SigningAlgorithm, publicKeyDER: Data, metadata: Data, createdAt: Date, updatedAt: Date, protection: KeyProtection
    ) throws {
        self.init(
            handle: handle, algorithm: algorithm, publicKey: try VerifyingKey(deferredSPKI: publicKeyDER), metadata: metadata,
            createdAt: createdAt, updatedAt: updatedAt, protection: protection
        )
    }

    init(handle: KeyHandle, algorithm: SigningAlgorithm, publicKey: VerifyingKey, metadata: Data, createdAt: Date, updatedAt: Date, protection: KeyProtection) {
        self.handle = handle
        self.algorithm = algorithm
        self.publicKey = publicKey
        self.metadata = metadata
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.protection = protection
    }

    /// The public key as SubjectPublicKeyInfo DER.
    public var publicKeyDER: Data { publicKey.spkiDER }
}

/// The result of reading every record: the entries that are sound, and a problem for each
/// record that is not. One bad record never hides the others.
public struct VaultScan: Sendable {
    public var entries: [VaultEntry]
    public var problems: [KeyVaultError]

    public init(entries: [VaultEntry], problems: [KeyVaultError]) {
        self.entries = entries
        self.problems = problems
    }
}
