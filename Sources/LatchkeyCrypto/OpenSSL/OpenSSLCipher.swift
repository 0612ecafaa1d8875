import CLatchkeyOpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// AES-256-GCM (NIST SP 800-38D) through `EVP_CIPHER`, fetched once.
enum OpenSSLCipher {
    static let tagByteCount = 16

    /// Encrypts and returns (ciphertext, tag).
    static func sealAES256GCM(
        _ plaintext: some DataProtocol,
        key: UnsafeRawBufferPointer,
        nonce: some DataProtocol,
        authenticating aad: some DataProtocol
    ) throws -> (ciphertext: Data, tag: Data) {
        let context = try makeContext(encrypting: true, key: key, nonce: nonce)
        defer { EVP_CIPHER_CTX_free(context) }
        var ciphertext = Data(count: plaintext.count)
        var tag = Data(count: tagByteCount)
        try feed(context, aad: aad)
        try ciphertext.withUnsafeMutableBytes { output in
            try plaintext.withContiguousBytes { input in
                var written: Int32 = 0
                guard EVP_EncryptUpdate(context, output.bindMemory(to: UInt8.self).baseAddress, &written,
                                        input.bindMemory(to: UInt8.self).baseAddress, Int32(input.count)) == 1,
                      Int(written) == input.count
                else {
                    throw CryptoError.fromOpenSSL(.openSSLFailure, "AES-GCM encryption failed")
                }
                var final: Int32 = 0
                guard EVP_EncryptFinal_ex(context, output.bindMemory(to: UInt8.self).baseAddress.map { $0 + input.count }, &final) == 1 else {
                    throw CryptoError.fromOpenSSL(.openSSLFailure, "AES-GCM encryption failed")
                }
            }
        }
        try tag.withUnsafeMutableBytes { tagBytes in
            var params = [
                OSSL_PARAM_construct_octet_string(OSSLParameterName.aeadTag.pointer, tagBytes.baseAddress, tagBytes.count),
                CLatchkey_OSSL_PARAM_END(),
            ]
            guard EVP_CIPHER_CTX_get_params(context, &params) == 1 else {
                throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot read the AES-GCM tag")
            }
        }
        return (ciphertext, tag)
    }

    /// Decrypts and checks the tag; the plaintext is released only when the tag matches.
    static func openAES256GCM(
        ciphertext: some DataProtocol,
        tag: some DataProtocol,
        key: UnsafeRawBufferPointer,
        nonce: some DataProtocol,
        authenticating aad: some DataProtocol
    ) throws -> Data {
        let context = try makeContext(encrypting: false, key: key, nonce: nonce)
        defer { EVP_CIPHER_CTX_free(context) }
        var plaintext = Data(count: ciphertext.count)
        try feed(context, aad: aad)
        let authentic = plaintext.withUnsafeMutableBytes { output in
            ciphertext.withContiguousBytes { input in
                var written: Int32 = 0
                guard EVP_DecryptUpdate(context, output.bindMemory(to: UInt8.self).baseAddress, &written,
                                        input.bindMemory(to: UInt8.self).baseAddress, Int32(input.count)) == 1
                else { return false }
                let tagSet = tag.withContiguousBytes { tagBytes in
                    var params = [
                        OSSL_PARAM_construct_octet_string(OSSLParameterName.aeadTag.pointer, UnsafeMutableRawPointer(mutating: tagBytes.baseAddress), tagBytes.count),
                        CLatchkey_OSSL_PARAM_END(),
                    ]
                    return EVP_CIPHER_CTX_set_params(context, &params) == 1
                }
                var final: Int32 = 0
                return tagSet && EVP_DecryptFinal_ex(context, output.bindMemory(to: UInt8.self).baseAddress.map { $0 + input.count }, &final) == 1
            }
        }
        guard authentic else {
            secureZero(&plaintext)
            OpenSSLErrorQueue.clear()
            throw CryptoError.authenticationFailure(reason: "AES-GCM authentication failed: wrong key, nonce, tag, associated data or ciphertext")
        }
        return plaintext
    }

    private static func makeContext(encrypting: Bool, key: UnsafeRawBufferPointer, nonce: some DataProtocol) throws -> OpaquePointer {
        let cipher = try FetchedAlgorithms.aes256GCM.get()
        guard let context = EVP_CIPHER_CTX_new() else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot allocate a cipher context")
        }
        var nonceLength = nonce.count
        let ok = nonce.withContiguousBytes { nonceBytes -> Bool in
            var params = [
                OSSL_PARAM_construct_size_t(OSSLParameterName.aeadNonceLength.pointer, &nonceLength),
                CLatchkey_OSSL_PARAM_END(),
            ]
            let encrypt: Int32 = encrypting ? 1 : 0
            return EVP_CipherInit_ex2(context, cipher, nil, nil, encrypt, &params) == 1
                && EVP_CipherInit_ex2(context, nil, key.bindMemory(to: UInt8.self).baseAddress,
                                      nonceBytes.bindMemory(to: UInt8.self).baseAddress, encrypt, nil) == 1
        }
        guard ok else {
            EVP_CIPHER_CTX_free(context)
            throw CryptoError.fromOpenSSL(.invalidParameter, "cannot initialise AES-256-GCM with this key and nonce")
        }
        return context
    }

    private static func feed(_ context: OpaquePointer, aad: some DataProtocol) throws {
        guard !aad.isEmpty else { return }
        let ok = aad.withContiguousBytes { bytes in
            var written: Int32 = 0
            return EVP_CipherUpdate(context, nil, &written, bytes.bindMemory(to: UInt8.self).baseAddress, Int32(bytes.count)) == 1
        }
        guard ok else { throw CryptoError.fromOpenSSL(.openSSLFailure, "AES-GCM associated data failed") }
    }
}
