#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// scrypt (RFC 7914), the memory-hard KDF that turns a vault passphrase into a key.
public enum Scrypt {
    /// Cost parameters. They are read back from files on disk, so they are validated
    /// before use: a hostile header must not make an open take gigabytes or hours.
    public struct Parameters: Codable, Hashable, Sendable {
        /// CPU/memory cost N, a power of two greater than 1 (RFC 7914 §2).
        public var costFactor: UInt64
        /// Block size r.
        public var blockSize: UInt32
        /// Parallelisation p.
        public var parallelism: UInt32

        public init(costFactor: UInt64, blockSize: UInt32, parallelism: UInt32) {
            self.costFactor = costFactor
            self.blockSize = blockSize
            self.parallelism = parallelism
        }

        /// N = 2^17, r = 8, p = 1: 128 MiB and a few hundred milliseconds, in line with
        /// current guidance for interactive logins (OWASP: N ≥ 2^17, r = 8, p = 1).
        public static let interactive = Parameters(costFactor: 1 << 17, blockSize: 8, parallelism: 1)

        /// The largest N accepted: 2^20 (RFC 7914 §2's suggested file-encryption cost).
        public static let maximumCostFactor: UInt64 = 1 << 20
        /// The most memory a derivation may use: 1 GiB plus scrypt's own bookkeeping.
        public static let maximumMemoryBytes: UInt64 = (1 << 30) + (1 << 20)

        /// The memory scrypt needs: 128 · r · (N + p) bytes.
        var memoryBytes: UInt64 {
            128 * UInt64(blockSize) * (costFactor + UInt64(parallelism))
        }

        /// Throws unless N is a power of two in 2...2^20, 1 ≤ r ≤ 32, 1 ≤ p ≤ 16 and the
        /// memory fits the bound.
        public func validate() throws {
            guard costFactor > 1, costFactor <= Self.maximumCostFactor, costFactor & (costFactor - 1) == 0 else {
                throw CryptoError.invalidParameter(reason: "scrypt N must be a power of two from 2 to 2^20")
            }
            guard (1...32).contains(blockSize), (1...16).contains(parallelism) else {
                throw CryptoError.invalidParameter(reason: "scrypt r must be 1 to 32 and p 1 to 16")
            }
            guard memoryBytes <= Self.maximumMemoryBytes else {
                throw CryptoError.invalidParameter(reason: "scrypt parameters need more than 1 GiB of memory")
            }
        }
    }

    /// Derives `outputByteCount` (1 to 1024) bytes from `password` and `salt`.
    public static func deriveKey(
        password: some DataProtocol,
        salt: some DataProtocol,
        parameters: Parameters,
        outputByteCount: Int = 32
    ) throws -> SymmetricKey {
        try parameters.validate()
        guard outputByteCount > 0, outputByteCount <= 1024 else {
            throw CryptoError.invalidParameter(reason: "scrypt output must be 1 to 1024 bytes")
        }
        guard password.count <= 1 << 16, salt.count <= 1 << 16 else {
            throw CryptoError.invalidParameter(reason: "scrypt password and salt are limited to 64 KiB")
        }
        let derived = try OpenSSLKDF.scrypt(
            password: password,
            salt: salt,
            n: parameters.costFactor,
            r: parameters.blockSize,
            p: parameters.parallelism,
            maximumMemory: Parameters.maximumMemoryBytes,
            outputByteCount: outputByteCount
        )
        return SymmetricKey(storage: derived)
    }
}
