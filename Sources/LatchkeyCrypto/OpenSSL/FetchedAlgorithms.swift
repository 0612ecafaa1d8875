import CLatchkeyOpenSSL

/// One algorithm implementation fetched from OpenSSL's providers (`EVP_MD_fetch`,
/// `EVP_MAC_fetch`, `EVP_KDF_fetch`, `EVP_CIPHER_fetch`).
///
/// OpenSSL 3 searches its provider tables on every fetch; doing that per call is 3.0's
/// best-known slowdown. Each algorithm Latchkey uses is fetched once, on first use, and
/// kept for the life of the process. The pointer is immutable and OpenSSL's fetched
/// objects are reference counted and safe to share between threads.
final class FetchedAlgorithm: @unchecked Sendable {
    let pointer: OpaquePointer?
    private let description: String
    private let release: @Sendable (OpaquePointer?) -> Void

    private init(
        _ description: String,
        fetch: () -> OpaquePointer?,
        release: @escaping @Sendable (OpaquePointer?) -> Void
    ) {
        self.description = description
        self.pointer = fetch()
        self.release = release
        OpenSSLErrorQueue.clear()
    }

    deinit { release(pointer) }

    /// The fetched pointer, or a clear error when the provider lacks the algorithm.
    func get() throws -> OpaquePointer {
        guard let pointer else {
            throw CryptoError.unsupportedAlgorithm(reason: "OpenSSL has no \(description) (is the default provider available?)"
            )
        }
        return pointer
    }

    static func digest(_ name: String) -> FetchedAlgorithm {
        FetchedAlgorithm("\(name) digest", fetch: { EVP_MD_fetch(nil, name, nil) }, release: { EVP_MD_free($0) })
    }

    static func mac(_ name: String) -> FetchedAlgorithm {
        FetchedAlgorithm("\(name) MAC", fetch: { EVP_MAC_fetch(nil, name, nil) }, release: { EVP_MAC_free($0) })
    }

    static func kdf(_ name: String) -> FetchedAlgorithm {
        FetchedAlgorithm("\(name) KDF", fetch: { EVP_KDF_fetch(nil, name, nil) }, release: { EVP_KDF_free($0) })
    }

    static func cipher(_ name: String) -> FetchedAlgorithm {
        FetchedAlgorithm("\(name) cipher", fetch: { EVP_CIPHER_fetch(nil, name, nil) }, release: { EVP_CIPHER_free($0) })
    }
}

/// Every algorithm the crypto core uses. Swift initialises each `static let` lazily,
/// exactly once and thread-safely, which is the "fetch once, reuse" rule.
enum FetchedAlgorithms {
    static let sha256 = FetchedAlgorithm.digest("SHA2-256")
    static let sha384 = FetchedAlgorithm.digest("SHA2-384")
    static let sha512 = FetchedAlgorithm.digest("SHA2-512")
    static let hmac = FetchedAlgorithm.mac("HMAC")
    static let hkdf = FetchedAlgorithm.kdf("HKDF")
    static let scrypt = FetchedAlgorithm.kdf("SCRYPT")
    static let aes256GCM = FetchedAlgorithm.cipher("AES-256-GCM")
}
