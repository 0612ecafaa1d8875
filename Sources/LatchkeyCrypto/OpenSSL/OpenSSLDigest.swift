import CLatchkeyOpenSSL
import Foundation

/// One-shot `EVP_Digest` and HMAC through `EVP_MAC`, with algorithms fetched once.
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

    /// HMAC (RFC 2104) over `message` with `digestName`.
    static func hmac(
        _ message: some DataProtocol,
        key: UnsafeRawBufferPointer,
        digestName: String,
        byteCount: Int
    ) throws -> Data {
        let mac = try FetchedAlgorithms.hmac.get()
        guard let context = EVP_MAC_CTX_new(mac) else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot allocate an HMAC context")
        }
        defer { EVP_MAC_CTX_free(context) }
        var output = Data(count: byteCount)
        var length = 0
        let ok = digestName.withCString { name in
            var params = [
                OSSL_PARAM_construct_utf8_string(OSSLParameterName.macDigest.pointer, UnsafeMutablePointer(mutating: name), 0),
                CLatchkey_OSSL_PARAM_END(),
            ]
            return EVP_MAC_init(context, key.bindMemory(to: UInt8.self).baseAddress, key.count, &params) == 1
                && message.withContiguousBytes { input in
                    EVP_MAC_update(context, input.bindMemory(to: UInt8.self).baseAddress, input.count) == 1
                }
                && output.withUnsafeMutableBytes { out in
                    EVP_MAC_final(context, out.bindMemory(to: UInt8.self).baseAddress, &length, out.count) == 1
                }
        }
        guard ok, length == byteCount else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "HMAC failed")
        }
        return output
    }
}
