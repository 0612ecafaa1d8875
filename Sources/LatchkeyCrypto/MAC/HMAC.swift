public import Foundation

/// HMAC (RFC 2104) over a SHA-2 digest; SHA-256 by default (RFC 4231 vectors).
public enum HMAC {
    /// The full-length authentication code of `message` under `key`.
    public static func authenticationCode(
        for message: some DataProtocol,
        using key: SymmetricKey,
        digest: DigestAlgorithm = .sha256
    ) throws -> Data {
        try key.withUnsafeBytes { keyBytes in
            try OpenSSLDigest.hmac(message, key: keyBytes, digestName: digest.openSSLName, byteCount: digest.byteCount)
        }
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
        guard code.count == digest.byteCount,
              let expected = try? authenticationCode(for: message, using: key, digest: digest)
        else { return false }
        return ConstantTime.isEqual(expected, code)
    }
}
