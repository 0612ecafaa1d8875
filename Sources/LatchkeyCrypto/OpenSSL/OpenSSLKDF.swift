import CLatchkeyOpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// HKDF and scrypt through `EVP_KDF`. The derived bytes go straight into
/// ``SecureBytes`` so they are wiped when dropped.
enum OpenSSLKDF {
    /// HKDF extract-and-expand (RFC 5869 §2) with SHA-256, on HMAC contexts duplicated
    /// from one that holds the digest (``KeylessHMAC``): `EVP_KDF` looked the digest up
    /// by name and built a context on every call, twice the work of the two HMACs, and the
    /// provider derives a key for every ticket it seals or opens (docs/PERFORMANCE.md,
    /// "Less per request"). The RFC 5869 vectors hold it to the same output.
    static func hkdfSHA256(
        inputKeyMaterial ikm: UnsafeRawBufferPointer,
        salt: some DataProtocol,
        info: some DataProtocol,
        outputByteCount: Int
    ) throws -> SecureBytes {
        let hmac = try KeylessHMAC.sha256()
        let hashLength = KeylessHMAC.sha256ByteCount
        // The pseudorandom key and each block stay on the stack and are wiped there;
        // only the output is a pinned allocation.
        return try withUnsafeTemporaryAllocation(byteCount: 2 * hashLength, alignment: 16) { scratch in
            defer { OPENSSL_cleanse(scratch.baseAddress, scratch.count) }
            let prk = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<hashLength])
            let block = UnsafeMutableRawBufferPointer(rebasing: scratch[hashLength...])
            prk.initializeMemory(as: UInt8.self, repeating: 0)
            try salt.withContiguousBytes { saltBytes in
                // §2.2: no salt is HashLen zeros, the zeroed `prk` before it is written.
                let key = saltBytes.isEmpty ? UnsafeRawBufferPointer(prk) : saltBytes
                try hmac.code(key: key, [ikm], into: prk)
            }
            return try info.withContiguousBytes { infoBytes in
                try SecureBytes(count: outputByteCount) { output in
                    // §2.3: T(i) = HMAC(PRK, T(i-1) ‖ info ‖ i), T(0) empty.
                    var counter: UInt8 = 1
                    var offset = 0
                    while offset < outputByteCount {
                        let chained = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(block)[0..<(counter == 1 ? 0 : hashLength)])
                        try withUnsafeBytes(of: counter) { counterByte in
                            try hmac.code(key: UnsafeRawBufferPointer(prk), [chained, infoBytes, counterByte], into: block)
                        }
                        let count = min(hashLength, outputByteCount - offset)
                        output.baseAddress!.advanced(by: offset).copyMemory(from: block.baseAddress!, byteCount: count)
                        offset += count
                        counter &+= 1
                    }
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
