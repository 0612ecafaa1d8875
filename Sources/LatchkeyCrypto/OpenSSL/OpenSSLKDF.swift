import CLatchkeyOpenSSL
import Foundation

/// HKDF and scrypt through `EVP_KDF`. The derived bytes go straight into
/// ``SecureBytes`` so they are wiped when dropped.
enum OpenSSLKDF {
    /// HKDF extract-and-expand (RFC 5869 §2) with SHA-256.
    static func hkdfSHA256(
        inputKeyMaterial ikm: UnsafeRawBufferPointer,
        salt: some DataProtocol,
        info: some DataProtocol,
        outputByteCount: Int
    ) throws -> SecureBytes {
        try "SHA2-256".withCString { digest in
            try salt.withContiguousBytes { saltBytes in
                try info.withContiguousBytes { infoBytes in
                    var params = [
                        OSSL_PARAM_construct_utf8_string(OSSLParameterName.kdfDigest.pointer, UnsafeMutablePointer(mutating: digest), 0),
                        OSSL_PARAM_construct_octet_string(OSSLParameterName.kdfKey.pointer, UnsafeMutableRawPointer(mutating: ikm.baseAddress), ikm.count),
                        OSSL_PARAM_construct_octet_string(OSSLParameterName.kdfSalt.pointer, UnsafeMutableRawPointer(mutating: saltBytes.baseAddress), saltBytes.count),
                        OSSL_PARAM_construct_octet_string(OSSLParameterName.kdfInfo.pointer, UnsafeMutableRawPointer(mutating: infoBytes.baseAddress), infoBytes.count),
                        CLatchkey_OSSL_PARAM_END(),
                    ]
                    return try derive(FetchedAlgorithms.hkdf, &params, outputByteCount: outputByteCount, name: "HKDF")
                }
            }
        }
    }

    /// scrypt (RFC 7914 §6). Parameters are validated by the caller.
    static func scrypt(
        password: some DataProtocol,
        salt: some DataProtocol,
        n: UInt64,
        r: UInt32,
        p: UInt32,
        maximumMemory: UInt64,
        outputByteCount: Int
    ) throws -> SecureBytes {
        var n = n
        var r = r
        var p = p
        var maximumMemory = maximumMemory
        return try password.withContiguousBytes { passwordBytes in
            try salt.withContiguousBytes { saltBytes in
                var params = [
                    OSSL_PARAM_construct_octet_string(OSSLParameterName.kdfPassword.pointer, UnsafeMutableRawPointer(mutating: passwordBytes.baseAddress), passwordBytes.count),
                    OSSL_PARAM_construct_octet_string(OSSLParameterName.kdfSalt.pointer, UnsafeMutableRawPointer(mutating: saltBytes.baseAddress), saltBytes.count),
                    OSSL_PARAM_construct_uint64(OSSLParameterName.scryptN.pointer, &n),
                    OSSL_PARAM_construct_uint32(OSSLParameterName.scryptR.pointer, &r),
                    OSSL_PARAM_construct_uint32(OSSLParameterName.scryptP.pointer, &p),
                    OSSL_PARAM_construct_uint64(OSSLParameterName.scryptMaximumMemory.pointer, &maximumMemory),
                    CLatchkey_OSSL_PARAM_END(),
                ]
                return try derive(FetchedAlgorithms.scrypt, &params, outputByteCount: outputByteCount, name: "scrypt")
            }
        }
    }

    private static func derive(
        _ kdf: FetchedAlgorithm,
        _ params: inout [OSSL_PARAM],
        outputByteCount: Int,
        name: String
    ) throws -> SecureBytes {
        guard let context = EVP_KDF_CTX_new(try kdf.get()) else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot allocate a \(name) context")
        }
        defer { EVP_KDF_CTX_free(context) }
        return try SecureBytes(count: outputByteCount) { output in
            guard EVP_KDF_derive(context, output.bindMemory(to: UInt8.self).baseAddress, output.count, &params) == 1 else {
                throw CryptoError.fromOpenSSL(.invalidParameter, "\(name) derivation failed")
            }
        }
    }
}
