#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// HMAC (RFC 2104) over a SHA-2 digest; SHA-256 by default (RFC 4231 vectors).
public enum HMAC {
    /// The full-length authentication code of `message` under `key`.
    public static func authenticationCode(
        for message: some DataProtocol,
        using key: SymmetricKey,
        digest: DigestAlgorithm = .sha256
    ) throws -> Data {
        try PreparedHMAC(key: key, digest: digest).authenticationCode(for: message)
    }

    /// Whether `code` is the full-length code of `message` under `key`, compared in
    /// constant time. Truncated codes are refused: accept them only where a protocol
    /// defines the truncation, by comparing a prefix yourself with ``ConstantTime``.
    public static func isValidAuthenticationCode(
        _ code: some DataProtocol,
        for message: some DataProtocol,
        using key: SymmetricKey,
        digest: DigestAlgorithm = .sha256
    ) -> Bool {
        guard let prepared = try? PreparedHMAC(key: key, digest: digest) else { return false }
        return prepared.isValidAuthenticationCode(code, for: message)
    }
}
