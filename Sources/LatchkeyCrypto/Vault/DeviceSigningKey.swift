#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A vault key ready to sign, wherever its private half lives (``KeyProtection``).
enum DeviceSigningKey: Sendable {
    /// Parsed from the record's PKCS#8: kept in the vault's cache.
    case software(SigningKey)
    /// A TPM blob: loaded into the TPM for each signature, never cached in the TPM.
    case tpm(TPMSigningKey)

    var publicKey: VerifyingKey {
        switch self {
        case .software(let key): key.publicKey
        case .tpm(let key): key.publicKey
        }
    }

    /// The software key, if this is one.
    var software: SigningKey? {
        if case .software(let key) = self { key } else { nil }
    }

    /// Signs; a TPM's failure becomes the vault's typed TPM error for `handle`.
    func signature(for message: Data, handle: KeyHandle) throws -> Data {
        switch self {
        case .software(let key):
            return try key.signature(for: message)
        case .tpm(let key):
            do {
                return try key.signature(for: message)
            } catch let error as CryptoError {
                throw KeyVaultError(tpm: error, handle: handle)
            }
        }
    }
}
