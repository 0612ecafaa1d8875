#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// HKDF with SHA-256 (RFC 5869): extract a pseudorandom key from `inputKeyMaterial` and
/// `salt`, expand it with `info` to the length asked for.
public enum HKDF {
    /// RFC 5869 §2.3: at most 255 hash lengths of output.
    public static let maximumOutputByteCount = 255 * 32
    /// OpenSSL 3.0 limits `info` to 1024 bytes; stated here so the error is ours.
    public static let maximumInfoByteCount = 1024

    /// Derives `outputByteCount` bytes. An empty salt means a string of zeros (§2.2).
    public static func deriveKey(
        inputKeyMaterial: SymmetricKey,
        salt: some DataProtocol = Data(),
        info: some DataProtocol = Data(),
        outputByteCount: Int
    ) throws -> SymmetricKey {
        guard outputByteCount > 0, outputByteCount <= maximumOutputByteCount else {
            throw CryptoError.invalidParameter(reason: "HKDF-SHA-256 output must be 1 to \(maximumOutputByteCount) bytes, not \(outputByteCount)")
        }
        guard info.count <= maximumInfoByteCount else {
            throw CryptoError.invalidParameter(reason: "HKDF info over \(maximumInfoByteCount) bytes")
        }
        let derived = try inputKeyMaterial.withUnsafeBytes { ikm in
            try OpenSSLKDF.hkdfSHA256(inputKeyMaterial: ikm, salt: salt, info: info, outputByteCount: outputByteCount)
        }
        return SymmetricKey(storage: derived)
    }
}
