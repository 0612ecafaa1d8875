import CLatchkeyOpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One-shot `EVP_Digest`, and HMAC through `EVP_MAC`, with algorithms fetched once.
enum OpenSSLDigest {
    static func hash(_ data: some DataProtocol, with digest: FetchedAlgorithm, byteCount: Int) throws -> Data {
        let md = try digest.get()
        var output = Data(count: byteCount)
        var length: UInt32 = 0
        let ok = data.withContiguousBytes { input in
            output.withUnsafeMutableBytes { out in
                EVP_Digest(input.baseAddress, input.count, out.bindMemory(to: UInt8.self).baseAddress, &length, md, nil)
            }
        }
        guard ok == 1, Int(length) == byteCount else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "digest failed")
        }
        return output
    }
}

/// An HMAC key set into an `EVP_MAC_CTX` once; each code is computed on a duplicate, so
/// the per-call cost is the hashing, not `EVP_MAC_init` (which looks the digest up and
/// hashes the key again). The prepared context is only read, so one instance serves
/// many threads. Used where one key authenticates many messages (vault records).
final class PreparedHMAC: @unchecked Sendable {
    private let prepared: OpaquePointer
    private let byteCount: Int

    init(key: SymmetricKey, digest: DigestAlgorithm = .sha256) throws {
        let context = try Self.context(digest: digest)
        let ok = key.withUnsafeBytes { keyBytes in
            EVP_MAC_init(context, keyBytes.bindMemory(to: UInt8.self).baseAddress, keyBytes.count, nil) == 1
        }
        guard ok else {
            EVP_MAC_CTX_free(context)
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot prepare HMAC")
        }
        prepared = context
        byteCount = digest.byteCount
    }

    /// A new `EVP_MAC_CTX` for HMAC with `digest` set and no key yet; the caller frees it.
    static func context(digest: DigestAlgorithm) throws -> OpaquePointer {
        guard let context = EVP_MAC_CTX_new(try FetchedAlgorithms.hmac.get()) else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot allocate an HMAC context")
        }
        let ok = digest.openSSLName.withCString { name in
            var params = [
                OSSL_PARAM_construct_utf8_string(OSSLParameterName.macDigest.pointer, UnsafeMutablePointer(mutating: name), 0),
                CLatchkey_OSSL_PARAM_END(),
            ]
            return EVP_MAC_CTX_set_params(context, &params) == 1
        }
        guard ok else {
            EVP_MAC_CTX_free(context)
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot set HMAC's digest")
        }
        return context
    }

    deinit { EVP_MAC_CTX_free(prepared) }

    func authenticationCode(for message: some DataProtocol) throws -> Data {
        guard let context = EVP_MAC_CTX_dup(prepared) else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot duplicate an HMAC context")
        }
        defer { EVP_MAC_CTX_free(context) }
        var output = Data(count: byteCount)
        var length = 0
        let ok = message.withContiguousBytes { input in
            EVP_MAC_update(context, input.bindMemory(to: UInt8.self).baseAddress, input.count) == 1
        } && output.withUnsafeMutableBytes { out in
            EVP_MAC_final(context, out.bindMemory(to: UInt8.self).baseAddress, &length, out.count) == 1
        }
        guard ok, length == byteCount else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "HMAC failed")
        }
        return output
    }

    /// Constant-time check of a full-length code.
    func isValidAuthenticationCode(_ code: some DataProtocol, for message: some DataProtocol) -> Bool {
        guard code.count == byteCount, let expected = try? authenticationCode(for: message) else { return false }
        return ConstantTime.isEqual(expected, code)
    }
}

/// An HMAC context that holds only its digest; each code is computed on a duplicate keyed
/// with `EVP_MAC_init`, so a call pays for hashing the key and the message, not for looking
/// the digest up. For HKDF (``OpenSSLKDF/hkdfSHA256(inputKeyMaterial:salt:info:outputByteCount:)``),
/// whose HMAC keys (a salt, then the pseudorandom key) change on every call. The context is
/// only read, so one instance serves many threads.
final class KeylessHMAC: @unchecked Sendable {
    static let sha256ByteCount = 32
    private static let sharedSHA256 = Result<KeylessHMAC, any Error> { try KeylessHMAC(digest: .sha256) }

    /// The process's SHA-256 instance, made on first use.
    static func sha256() throws -> KeylessHMAC {
        try sharedSHA256.get()
    }

    private let prepared: OpaquePointer
    private let byteCount: Int

    private init(digest: DigestAlgorithm) throws {
        prepared = try PreparedHMAC.context(digest: digest)
        byteCount = digest.byteCount
    }

    deinit { EVP_MAC_CTX_free(prepared) }

    /// HMAC under `key` of the concatenation of `parts`, written into `output` (the
    /// digest's length). `key` must not be empty.
    func code(key: UnsafeRawBufferPointer, _ parts: [UnsafeRawBufferPointer], into output: UnsafeMutableRawBufferPointer) throws {
        precondition(!key.isEmpty && output.count == byteCount, "an HMAC key and an output of the digest's length")
        guard let context = EVP_MAC_CTX_dup(prepared) else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot duplicate an HMAC context")
        }
        defer { EVP_MAC_CTX_free(context) }
        var ok = EVP_MAC_init(context, key.bindMemory(to: UInt8.self).baseAddress, key.count, nil) == 1
        for part in parts where ok && !part.isEmpty {
            ok = EVP_MAC_update(context, part.bindMemory(to: UInt8.self).baseAddress, part.count) == 1
        }
        var length = 0
        ok = ok && EVP_MAC_final(context, output.bindMemory(to: UInt8.self).baseAddress, &length, output.count) == 1
        guard ok, length == byteCount else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "HMAC failed")
        }
    }
}
