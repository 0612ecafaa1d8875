import CLatchkeyOpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The OpenSSL operations behind ``TPMCredentialProtection`` (TPM 2.0 Part 1 §24, in
/// software): RSA-OAEP to an endorsement key's certificate, AES-128-CFB with a zero IV,
/// and the RSA modulus a TPM's endorsement key must match.
extension X509Pointer {
    /// The modulus of the certificate's RSA key, big-endian without leading zeros; nil
    /// when the key is not RSA.
    func rsaModulus() -> Data? {
        guard let key = X509_get0_pubkey(pointer), EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA else { return nil }
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key, "n", &number) == 1, let number else { return nil }
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: (Int(BN_num_bits(number)) + 7) / 8)
        guard BN_bn2bin(number, &bytes) == bytes.count else { return nil }
        return Data(bytes)
    }

    /// RSAES-OAEP (RFC 8017 §7.1) of `plaintext` to the certificate's RSA key, with SHA-256
    /// for the hash and MGF1, and `label`.
    func encryptRSAOAEP(_ plaintext: Data, label: Data) throws -> Data {
        guard let key = X509_get0_pubkey(pointer), EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA else {
            throw CryptoError.invalidKey(reason: "the endorsement key certificate's key is not RSA")
        }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot allocate an RSA encryption context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var labelBytes = [UInt8](label)
        let initialised = labelBytes.withUnsafeMutableBytes { labelBuffer in
            var parameters = [
                OSSL_PARAM_construct_utf8_string(OSSLParameterName.padMode.pointer, OSSLParameterName.oaep.mutablePointer, 0),
                OSSL_PARAM_construct_utf8_string(OSSLParameterName.oaepDigest.pointer, OSSLParameterName.sha256.mutablePointer, 0),
                OSSL_PARAM_construct_utf8_string(OSSLParameterName.mgf1Digest.pointer, OSSLParameterName.sha256.mutablePointer, 0),
                OSSL_PARAM_construct_octet_string(OSSLParameterName.oaepLabel.pointer, labelBuffer.baseAddress, labelBuffer.count),
                CLatchkey_OSSL_PARAM_END(),
            ]
            return EVP_PKEY_encrypt_init_ex(context, &parameters) == 1
        }
        guard initialised else { throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot set up RSA-OAEP with SHA-256") }
        var length = 0
        guard EVP_PKEY_encrypt(context, nil, &length, [UInt8](plaintext), plaintext.count) == 1, (1...1024).contains(length) else {
            throw CryptoError.fromOpenSSL(.invalidParameter, "RSA-OAEP cannot encrypt \(plaintext.count) bytes to this key")
        }
        var output = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_encrypt(context, &output, &length, [UInt8](plaintext), plaintext.count) == 1 else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "RSA-OAEP encryption failed")
        }
        return Data(output.prefix(length))
    }
}

extension OpenSSLCipher {
    /// AES-128 in CFB mode (CFB-128, NIST SP 800-38A §6.3) with a zero IV, as the TPM
    /// protects a credential (TPM 2.0 Part 1 §24.4: the key is used once).
    static func aes128CFB(_ input: Data, key: Data, encrypting: Bool) throws -> Data {
        guard key.count == 16 else { throw CryptoError.invalidParameter(reason: "AES-128 takes a 16-byte key") }
        guard let cipher = EVP_CIPHER_fetch(nil, "AES-128-CFB", nil) else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "AES-128-CFB is not available")
        }
        defer { EVP_CIPHER_free(cipher) }
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot allocate a cipher context") }
        defer { EVP_CIPHER_CTX_free(context) }
        let iv = [UInt8](repeating: 0, count: 16)
        var output = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0
        var final: Int32 = 0
        let done = [UInt8](key).withUnsafeBufferPointer { keyBytes in
            EVP_CipherInit_ex2(context, cipher, keyBytes.baseAddress, iv, encrypting ? 1 : 0, nil) == 1
                && EVP_CipherUpdate(context, &output, &written, [UInt8](input), Int32(input.count)) == 1
                && EVP_CipherFinal_ex(context, &output[Int(written)], &final) == 1
        }
        guard done, Int(written + final) == input.count else { throw CryptoError.fromOpenSSL(.openSSLFailure, "AES-128-CFB failed") }
        return Data(output.prefix(input.count))
    }
}
