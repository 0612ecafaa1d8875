#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// AES-256-GCM (NIST SP 800-38D): the AEAD that seals private keys in the vault.
///
/// Keys are 32 bytes; tags are the full 16 bytes. ``seal(_:using:nonce:authenticating:)``
/// draws a fresh 12-byte nonce from the CSPRNG unless one is given; never reuse a nonce
/// under one key. Opening accepts nonces of 1 to 128 bytes: GCM defines other lengths
/// (SP 800-38D §8.2) and old data may use them, but OpenSSL's GCM stops at 128 bytes and
/// only 12-byte nonces should be used for new data.
public enum AESGCM {
    /// The recommended (and generated) nonce length.
    public static let nonceByteCount = 12
    /// The tag length.
    public static let tagByteCount = 16
    /// The longest nonce accepted (OpenSSL's GCM limit).
    public static let maximumNonceByteCount = 128
    /// The largest message sealed or opened in one call.
    public static let maximumMessageByteCount = 1 << 30

    /// A sealed message: nonce, ciphertext and tag.
    public struct SealedBox: Hashable, Sendable {
        public var nonce: Data
        public var ciphertext: Data
        public var tag: Data

        public init(nonce: Data, ciphertext: Data, tag: Data) {
            self.nonce = nonce
            self.ciphertext = ciphertext
            self.tag = tag
        }

        /// `nonce ‖ ciphertext ‖ tag`, the usual single-blob form (12-byte nonces only).
        public var combined: Data { nonce + ciphertext + tag }

        /// Splits a combined blob made with a 12-byte nonce.
        public init(combined: some DataProtocol) throws {
            let bytes = Data(combined)
            guard bytes.count >= AESGCM.nonceByteCount + AESGCM.tagByteCount else {
                throw CryptoError.invalidParameter(reason: "sealed box shorter than nonce and tag")
            }
            nonce = bytes.prefix(AESGCM.nonceByteCount)
            ciphertext = bytes.dropFirst(AESGCM.nonceByteCount).dropLast(AESGCM.tagByteCount)
            tag = bytes.suffix(AESGCM.tagByteCount)
        }
    }

    /// Encrypts `plaintext` and authenticates it with `aad`.
    public static func seal(
        _ plaintext: some DataProtocol,
        using key: SymmetricKey,
        nonce: Data? = nil,
        authenticating aad: some DataProtocol = Data()
    ) throws -> SealedBox {
        let nonce = try nonce ?? SecureRandom.bytes(count: nonceByteCount)
        try validate(key: key, nonce: nonce, messageByteCount: plaintext.count, aadByteCount: aad.count)
        let (ciphertext, tag) = try key.withUnsafeBytes { keyBytes in
            try OpenSSLCipher.sealAES256GCM(plaintext, key: keyBytes, nonce: nonce, authenticating: aad)
        }
        return SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag)
    }

    /// Decrypts `box` if, and only if, its tag matches under `key` and `aad`; otherwise
    /// throws ``CryptoError/Code/authenticationFailure`` and releases nothing.
    public static func open(
        _ box: SealedBox,
        using key: SymmetricKey,
        authenticating aad: some DataProtocol = Data()
    ) throws -> Data {
        try validate(key: key, nonce: box.nonce, messageByteCount: box.ciphertext.count, aadByteCount: aad.count)
        guard box.tag.count == tagByteCount else {
            throw CryptoError.authenticationFailure(reason: "AES-GCM tag must be \(tagByteCount) bytes")
        }
        return try key.withUnsafeBytes { keyBytes in
            try OpenSSLCipher.openAES256GCM(
                ciphertext: box.ciphertext, tag: box.tag, key: keyBytes, nonce: box.nonce, authenticating: aad
            )
        }
    }

    private static func validate(key: SymmetricKey, nonce: Data, messageByteCount: Int, aadByteCount: Int) throws {
        guard key.byteCount == 32 else {
            throw CryptoError.invalidParameter(reason: "AES-256-GCM needs a 32-byte key, not \(key.byteCount) bytes")
        }
        guard (1...maximumNonceByteCount).contains(nonce.count) else {
            throw CryptoError.invalidParameter(reason: "AES-GCM nonce must be 1 to \(maximumNonceByteCount) bytes, not \(nonce.count)")
        }
        guard messageByteCount <= maximumMessageByteCount, aadByteCount <= maximumMessageByteCount else {
            throw CryptoError.invalidParameter(reason: "AES-GCM message or associated data over 1 GiB")
        }
    }
}
