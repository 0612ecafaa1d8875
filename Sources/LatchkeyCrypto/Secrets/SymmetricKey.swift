#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Secret key bytes (an AES key, an HMAC key, a derived vault key).
///
/// The bytes are held in memory owned by the key, never in a `Data`, and wiped with
/// `OPENSSL_cleanse` when the last copy of the key goes away. They are not printed by
/// `description`, so a key in a log line or an error message shows nothing secret.
public struct SymmetricKey: Sendable, CustomStringConvertible {
    let storage: SecureBytes

    init(storage: SecureBytes) {
        self.storage = storage
    }

    /// A key holding a copy of `bytes`. (The caller's copy is the caller's to wipe.)
    public init(data bytes: some DataProtocol) {
        storage = SecureBytes(copying: bytes)
    }

    /// A key of `byteCount` bytes from the CSPRNG.
    public static func random(byteCount: Int = 32) throws -> SymmetricKey {
        guard byteCount > 0, byteCount <= 1024 else {
            throw CryptoError.invalidParameter(reason: "a random key is 1 to 1024 bytes")
        }
        return SymmetricKey(storage: try SecureBytes(count: byteCount) { try OpenSSLRandom.fill($0) })
    }

    /// The key length in bytes.
    public var byteCount: Int { storage.count }

    /// Calls `body` with the key bytes; do not let them escape.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try storage.withUnsafeBytes(body)
    }

    public var description: String { "SymmetricKey(\(byteCount) bytes, redacted)" }
}

extension SymmetricKey: Equatable {
    /// Compared in constant time.
    public static func == (lhs: SymmetricKey, rhs: SymmetricKey) -> Bool {
        lhs.withUnsafeBytes { a in rhs.withUnsafeBytes { b in OpenSSLRandom.constantTimeEqual(a, b) } }
    }
}
