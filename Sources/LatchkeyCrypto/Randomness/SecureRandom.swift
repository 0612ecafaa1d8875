#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The cryptographically secure random generator: OpenSSL's default DRBG, seeded from
/// the kernel (`RAND_bytes`). Every nonce, salt, key, verifier and code comes from here.
public enum SecureRandom {
    /// `count` random bytes.
    public static func bytes(count: Int) throws -> Data {
        guard count >= 0, count <= 1 << 20 else {
            throw CryptoError.invalidParameter(reason: "random byte count must be 0 to 1 MiB")
        }
        var data = Data(count: count)
        try data.withUnsafeMutableBytes { try OpenSSLRandom.fill($0) }
        return data
    }

    /// Fills `buffer` with random bytes.
    public static func fill(_ buffer: UnsafeMutableRawBufferPointer) throws {
        try OpenSSLRandom.fill(buffer)
    }

    /// A uniformly random integer in `0..<upperBound`, by rejection sampling (no modulo
    /// bias), for picking symbols of codes.
    public static func uniform(below upperBound: UInt32) throws -> UInt32 {
        guard upperBound > 0 else {
            throw CryptoError.invalidParameter(reason: "upper bound must be positive")
        }
        let limit = UInt32.max - UInt32.max % upperBound
        while true {
            var value: UInt32 = 0
            try withUnsafeMutableBytes(of: &value) { try OpenSSLRandom.fill($0) }
            if value < limit { return value % upperBound }
        }
    }
}
