import CLatchkeyOpenSSL

/// A NUL-terminated copy of an `OSSL_PARAM` key name that lives for the whole process.
///
/// `OSSL_PARAM` stores the key pointer, and Swift's automatic `String` to `char *`
/// bridging only lasts for the one call that builds the parameter, so a name passed that
/// way dangles by the time OpenSSL reads it. These copies are made once and never freed.
final class OSSLParameterName: @unchecked Sendable {
    let pointer: UnsafePointer<CChar>

    init(_ name: String) {
        let bytes = Array(name.utf8CString)
        let storage = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
        storage.initialize(from: bytes, count: bytes.count)
        pointer = UnsafePointer(storage)
    }

    static let groupName = OSSLParameterName(OSSL_PKEY_PARAM_GROUP_NAME)
    static let publicKey = OSSLParameterName(OSSL_PKEY_PARAM_PUB_KEY)
    static let rsaModulus = OSSLParameterName(OSSL_PKEY_PARAM_RSA_N)
    static let rsaExponent = OSSLParameterName(OSSL_PKEY_PARAM_RSA_E)
    static let macDigest = OSSLParameterName(OSSL_MAC_PARAM_DIGEST)
    static let kdfDigest = OSSLParameterName(OSSL_KDF_PARAM_DIGEST)
    static let kdfKey = OSSLParameterName(OSSL_KDF_PARAM_KEY)
    static let kdfSalt = OSSLParameterName(OSSL_KDF_PARAM_SALT)
    static let kdfInfo = OSSLParameterName(OSSL_KDF_PARAM_INFO)
    static let kdfPassword = OSSLParameterName(OSSL_KDF_PARAM_PASSWORD)
    static let scryptN = OSSLParameterName(OSSL_KDF_PARAM_SCRYPT_N)
    static let scryptR = OSSLParameterName(OSSL_KDF_PARAM_SCRYPT_R)
    static let scryptP = OSSLParameterName(OSSL_KDF_PARAM_SCRYPT_P)
    static let scryptMaximumMemory = OSSLParameterName(OSSL_KDF_PARAM_SCRYPT_MAXMEM)
    static let aeadTag = OSSLParameterName(OSSL_CIPHER_PARAM_AEAD_TAG)
    static let aeadNonceLength = OSSLParameterName(OSSL_CIPHER_PARAM_AEAD_IVLEN)
    static let padMode = OSSLParameterName(OSSL_ASYM_CIPHER_PARAM_PAD_MODE)
    static let oaepDigest = OSSLParameterName(OSSL_ASYM_CIPHER_PARAM_OAEP_DIGEST)
    static let mgf1Digest = OSSLParameterName(OSSL_ASYM_CIPHER_PARAM_MGF1_DIGEST)
    static let oaepLabel = OSSLParameterName(OSSL_ASYM_CIPHER_PARAM_OAEP_LABEL)
    /// Values, not names, that go in `utf8_string` parameters (which OpenSSL only reads).
    static let oaep = OSSLParameterName(OSSL_PKEY_RSA_PAD_MODE_OAEP)
    static let sha256 = OSSLParameterName("SHA256")

    /// For `OSSL_PARAM_construct_utf8_string`, whose buffer argument is not `const`.
    var mutablePointer: UnsafeMutablePointer<CChar> { UnsafeMutablePointer(mutating: pointer) }
}
