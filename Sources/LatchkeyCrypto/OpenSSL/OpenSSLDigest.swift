import CLatchkeyOpenSSL
import Foundation

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
        guard let context = EVP_MAC_CTX_new(try FetchedAlgorithms.hmac.get()) else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot allocate an HMAC context")
        }
        let ok = digest.openSSLName.withCString { name in
            key.withUnsafeBytes { keyBytes in
                var params = [
                    OSSL_PARAM_construct_utf8_string(OSSLParameterName.macDigest.pointer, UnsafeMutablePointer(mutating: name), 0),
                    CLatchkey_OSSL_PARAM_END(),
                ]
                return EVP_MAC_init(context, keyBytes.bindMemory(to: UInt8.self).baseAddress, keyBytes.count, &params) == 1
            }
        }
        guard ok else {
            EVP_MAC_CTX_free(context)
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot prepare HMAC")
        }
        prepared = context
        byteCount = digest.byteCount
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
