import CLatchkeyOpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Owner of one `EVP_PKEY`, freed in `deinit`. Immutable after init: OpenSSL allows a key
/// that is no longer modified to be used from several threads at once.
final class EVPKey: @unchecked Sendable {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { EVP_PKEY_free(pointer) }
}

/// Bounds on key input from outside: no real SPKI or PKCS#8 key of a supported type comes
/// near them, and they stop a hostile blob from costing megabytes or seconds of parsing.
enum KeyInputLimits {
    static let maximumDERSize = 16 * 1024
    static let minimumRSABits = 2048
    static let maximumRSABits = 8192
}

/// A P-256 parameters key, made once. Generating from it reuses the curve group instead
/// of rebuilding it by name for every key, which is 44% of a P-256 keygen in OpenSSL 3.0
/// (docs/ARCHITECTURE.md, "The crypto core"): ~40,000 keys/s against ~21,000 with `EVP_EC_gen`.
private final class P256Template: @unchecked Sendable {
    static let shared = P256Template()

    let parameters: OpaquePointer?

    private init() {
        var parameters: OpaquePointer?
        if let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) {
            if EVP_PKEY_paramgen_init(context) == 1,
               EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
               EVP_PKEY_paramgen(context, &parameters) == 1 {
                // kept
            } else {
                parameters = nil
            }
            EVP_PKEY_CTX_free(context)
        }
        OpenSSLErrorQueue.clear()
        self.parameters = parameters
    }

    deinit { EVP_PKEY_free(parameters) }
}

/// The DER bytes before the raw key in the only SubjectPublicKeyInfo encodings of a
/// P-256 key (RFC 5480 §2: id-ecPublicKey, namedCurve secp256r1, uncompressed point) and
/// of an Ed25519 key (RFC 8410 §4: id-Ed25519, no parameters).
enum SPKIPrefix {
    static let p256: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x08,
        0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04,
    ]
    static let ed25519: [UInt8] = [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00]
}

/// Key generation, parsing and encoding. The only place that builds `EVP_PKEY`s.
enum OpenSSLKeys {
    // MARK: Generation

    static func generate(_ algorithm: SigningAlgorithm) throws -> EVPKey {
        switch algorithm.backing {
        case .es256:
            guard let parameters = P256Template.shared.parameters,
                  let context = EVP_PKEY_CTX_new_from_pkey(nil, parameters, nil)
            else {
                throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot prepare P-256 key generation")
            }
            defer { EVP_PKEY_CTX_free(context) }
            var key: OpaquePointer?
            guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_generate(context, &key) == 1, let key else {
                throw CryptoError.fromOpenSSL(.openSSLFailure, "P-256 key generation failed")
            }
            return EVPKey(taking: key)
        case .ed25519:
            guard let key = CLatchkey_EVP_PKEY_Q_keygen_ED25519() else {
                throw CryptoError.fromOpenSSL(.openSSLFailure, "Ed25519 key generation failed")
            }
            return EVPKey(taking: key)
        }
    }

    // MARK: Classification

    /// What a parsed key is, or an error for anything Latchkey does not accept.
    static func keyType(of key: EVPKey) throws -> VerifyingKey.KeyType {
        if EVP_PKEY_is_a(key.pointer, "EC") == 1 {
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            guard EVP_PKEY_get_utf8_string_param(key.pointer, OSSL_PKEY_PARAM_GROUP_NAME, &name, name.count, &length) == 1 else {
                throw CryptoError.fromOpenSSL(.unsupportedAlgorithm, "EC key without a named curve (explicit curve parameters are refused)")
            }
            let group = String(nulTerminated: name)
            guard group == "prime256v1" || group == "P-256" else {
                throw CryptoError.unsupportedAlgorithm(reason: "EC curve \(group) is not supported; only P-256 is")
            }
            return .p256
        }
        if EVP_PKEY_is_a(key.pointer, "ED25519") == 1 {
            return .ed25519
        }
        if EVP_PKEY_is_a(key.pointer, "RSA") == 1 {
            let bits = Int(EVP_PKEY_get_bits(key.pointer))
            guard bits >= KeyInputLimits.minimumRSABits, bits <= KeyInputLimits.maximumRSABits else {
                throw CryptoError.invalidKey(reason: "RSA key of \(bits) bits; \(KeyInputLimits.minimumRSABits) to \(KeyInputLimits.maximumRSABits) are accepted")
            }
            return .rsa
        }
        OpenSSLErrorQueue.clear()
        throw CryptoError.unsupportedAlgorithm(reason: "key type is not P-256, Ed25519 or RSA")
    }

    // MARK: DER parsing

    /// Parses a SubjectPublicKeyInfo (RFC 5280 §4.1.2.7); trailing bytes are refused.
    ///
    /// P-256 and Ed25519 keys have one DER form each (RFC 5480 §2, RFC 8410 §4): a fixed
    /// prefix and the raw key. Those are imported from the raw bytes (~28 µs) rather than
    /// through `d2i_PUBKEY` (~190 µs in OpenSSL 3.0); everything else goes to OpenSSL.
    static func parsePublicKey(spkiDER der: some DataProtocol) throws -> (EVPKey, VerifyingKey.KeyType) {
        guard !der.isEmpty, der.count <= KeyInputLimits.maximumDERSize else {
            throw CryptoError.invalidKey(reason: "SubjectPublicKeyInfo of \(der.count) bytes (1 to \(KeyInputLimits.maximumDERSize) accepted)")
        }
        let bytes = Array(der)
        if bytes.count == SPKIPrefix.p256.count + 64, bytes.starts(with: SPKIPrefix.p256) {
            let start = SPKIPrefix.p256.count
            return (try importP256(x: bytes[start..<start + 32], y: bytes[start + 32..<start + 64]), .p256)
        }
        if bytes.count == SPKIPrefix.ed25519.count + 32, bytes.starts(with: SPKIPrefix.ed25519) {
            return (try importEd25519(publicKey: bytes[SPKIPrefix.ed25519.count...]), .ed25519)
        }
        let parsed: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            let start = buffer.baseAddress
            var cursor = start
            let key = d2i_PUBKEY_ex(nil, &cursor, buffer.count, nil, nil)
            if let key, cursor != start.map({ $0 + buffer.count }) {
                EVP_PKEY_free(key)
                return nil
            }
            return key
        }
        guard let parsed else {
            throw CryptoError.fromOpenSSL(.invalidKey, "not a well-formed SubjectPublicKeyInfo")
        }
        let key = EVPKey(taking: parsed)
        let type = try keyType(of: key)
        if type == .ed25519, let refusal = Ed25519PublicKeyCheck.refusal(Array(try ed25519PublicBytes(of: key))) {
            throw CryptoError.invalidKey(reason: refusal)
        }
        return (key, type)
    }

    /// Parses a PKCS#8 PrivateKeyInfo (RFC 5208) holding a P-256 or Ed25519 key.
    static func parsePrivateKey(pkcs8DER der: some DataProtocol) throws -> (EVPKey, SigningAlgorithm) {
        guard !der.isEmpty, der.count <= KeyInputLimits.maximumDERSize else {
            throw CryptoError.invalidKey(reason: "PKCS#8 key of \(der.count) bytes (1 to \(KeyInputLimits.maximumDERSize) accepted)")
        }
        let parsed: OpaquePointer? = der.withContiguousBytes { bytes in
            let start = bytes.bindMemory(to: UInt8.self).baseAddress
            var cursor = start
            guard let info = d2i_PKCS8_PRIV_KEY_INFO(nil, &cursor, bytes.count) else { return nil }
            defer { PKCS8_PRIV_KEY_INFO_free(info) }
            guard cursor == start.map({ $0 + bytes.count }) else { return nil }
            return EVP_PKCS82PKEY_ex(info, nil, nil)
        }
        guard let parsed else {
            throw CryptoError.fromOpenSSL(.invalidKey, "not a well-formed PKCS#8 private key")
        }
        let key = EVPKey(taking: parsed)
        switch try keyType(of: key) {
        case .p256: return (key, .es256)
        case .ed25519: return (key, .ed25519)
        case .rsa: throw CryptoError.unsupportedAlgorithm(reason: "RSA private keys are not supported for signing")
        }
    }

    // MARK: Raw imports (RFC 7518 §6.2, RFC 8037 §2, RFC 7518 §6.3)

    /// Builds a P-256 public key from its affine coordinates; OpenSSL checks the point is
    /// on the curve. Far cheaper than parsing an SPKI in OpenSSL 3.0 (~28 µs vs ~200 µs).
    static func importP256(x: some DataProtocol, y: some DataProtocol) throws -> EVPKey {
        guard x.count == 32, y.count == 32 else {
            throw CryptoError.invalidKey(reason: "P-256 coordinates must be 32 bytes each")
        }
        var point = [UInt8](repeating: 0x04, count: 1)
        point.append(contentsOf: x)
        point.append(contentsOf: y)
        return try fromData(type: "EC", selection: CLatchkey_EVP_PKEY_PUBLIC_KEY, failure: "point is not on the P-256 curve") { build in
            "P-256".withCString { group in
                point.withUnsafeMutableBytes { pointBytes in
                    let params = [
                        OSSL_PARAM_construct_utf8_string(OSSLParameterName.groupName.pointer, UnsafeMutablePointer(mutating: group), 0),
                        OSSL_PARAM_construct_octet_string(OSSLParameterName.publicKey.pointer, pointBytes.baseAddress, pointBytes.count),
                        CLatchkey_OSSL_PARAM_END(),
                    ]
                    return build(params)
                }
            }
        }
    }

    /// Builds an Ed25519 public key from its 32 raw bytes (RFC 8032 §5.1.5); a point of
    /// small order or a non-canonical encoding is refused (``Ed25519PublicKeyCheck``).
    static func importEd25519(publicKey raw: some DataProtocol) throws -> EVPKey {
        if let refusal = Ed25519PublicKeyCheck.refusal(Array(raw)) { throw CryptoError.invalidKey(reason: refusal) }
        return try importEd25519(raw, half: "public", EVP_PKEY_new_raw_public_key_ex)
    }

    /// Builds an Ed25519 private key from its 32-byte seed (RFC 8032 §5.1.5).
    static func importEd25519(seed raw: some DataProtocol) throws -> EVPKey {
        try importEd25519(raw, half: "private", EVP_PKEY_new_raw_private_key_ex)
    }

    private static func importEd25519(
        _ raw: some DataProtocol,
        half: String,
        _ make: (OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<UInt8>?, Int) -> OpaquePointer?
    ) throws -> EVPKey {
        guard raw.count == 32 else {
            throw CryptoError.invalidKey(reason: "an Ed25519 \(half) key is 32 bytes, not \(raw.count)")
        }
        let key = raw.withContiguousBytes { bytes in
            make(nil, "ED25519", nil, bytes.bindMemory(to: UInt8.self).baseAddress, 32)
        }
        guard let key else { throw CryptoError.fromOpenSSL(.invalidKey, "not an Ed25519 \(half) key") }
        return EVPKey(taking: key)
    }

    /// Builds an RSA public key from its modulus and exponent, big-endian unsigned.
    static func importRSA(modulus: some DataProtocol, exponent: some DataProtocol) throws -> EVPKey {
        let n = Array(modulus.drop(while: { $0 == 0 }))
        let e = Array(exponent.drop(while: { $0 == 0 }))
        guard n.count * 8 >= KeyInputLimits.minimumRSABits - 7, n.count * 8 <= KeyInputLimits.maximumRSABits,
              !e.isEmpty, e.count <= 8, e.last.map({ $0 & 1 == 1 }) == true
        else {
            throw CryptoError.invalidKey(reason: "RSA modulus must be 2048 to 8192 bits and the exponent odd and at most 64 bits")
        }
        // OSSL_PARAM big numbers are in native byte order.
        var nativeN = n
        var nativeE = e
        if UInt16(1).littleEndian == 1 {
            nativeN.reverse()
            nativeE.reverse()
        }
        let key = try fromData(type: "RSA", selection: CLatchkey_EVP_PKEY_PUBLIC_KEY, failure: "not a usable RSA public key") { build in
            nativeN.withUnsafeMutableBytes { nBytes in
                nativeE.withUnsafeMutableBytes { eBytes in
                    let params = [
                        OSSL_PARAM_construct_BN(OSSLParameterName.rsaModulus.pointer, nBytes.bindMemory(to: UInt8.self).baseAddress, nBytes.count),
                        OSSL_PARAM_construct_BN(OSSLParameterName.rsaExponent.pointer, eBytes.bindMemory(to: UInt8.self).baseAddress, eBytes.count),
                        CLatchkey_OSSL_PARAM_END(),
                    ]
                    return build(params)
                }
            }
        }
        _ = try keyType(of: key)
        return key
    }

    /// Runs `EVP_PKEY_fromdata` with the parameters `withParameters` assembles.
    private static func fromData(
        type: String,
        selection: Int32,
        failure: String,
        _ withParameters: (([OSSL_PARAM]) -> OpaquePointer?) -> OpaquePointer?
    ) throws -> EVPKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot create a \(type) key context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_fromdata_init(context) == 1 else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot import a \(type) key")
        }
        let key = withParameters { parameters in
            var parameters = parameters
            var key: OpaquePointer?
            guard EVP_PKEY_fromdata(context, &key, selection, &parameters) == 1 else { return nil }
            return key
        }
        guard let key else { throw CryptoError.fromOpenSSL(.invalidKey, failure) }
        return EVPKey(taking: key)
    }

    // MARK: Encoding

    /// The key's SubjectPublicKeyInfo, DER. P-256 and Ed25519 are assembled from the raw
    /// key and the fixed prefix: `i2d_PUBKEY` goes through OpenSSL 3.0's encoder
    /// framework and costs ~90 µs, three ES256 signatures' worth.
    static func spkiDER(of key: EVPKey, type: VerifyingKey.KeyType) throws -> Data {
        switch type {
        case .p256:
            let (x, y) = try p256Coordinates(of: key)
            return Data(SPKIPrefix.p256) + x + y
        case .ed25519:
            return Data(SPKIPrefix.ed25519) + (try ed25519PublicBytes(of: key))
        case .rsa:
            var output: UnsafeMutablePointer<UInt8>?
            let length = i2d_PUBKEY(key.pointer, &output)
            guard length > 0, let output else {
                throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot encode the public key")
            }
            defer { CLatchkey_OPENSSL_free(output) }
            return Data(bytes: output, count: Int(length))
        }
    }

    /// Calls `body` with the key's PKCS#8 DER, then wipes and frees it.
    static func withPKCS8DER<R>(of key: EVPKey, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        guard let info = EVP_PKEY2PKCS8(key.pointer) else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot encode the private key as PKCS#8")
        }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_PKCS8_PRIV_KEY_INFO(info, &output)
        guard length > 0, let output else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot encode the private key as PKCS#8")
        }
        defer { CLatchkey_OPENSSL_clear_free(output, Int(length)) }
        return try body(UnsafeRawBufferPointer(start: output, count: Int(length)))
    }

    /// The uncompressed point `04 ‖ x ‖ y` of a P-256 key, split into x and y.
    static func p256Coordinates(of key: EVPKey) throws -> (x: Data, y: Data) {
        var point = [UInt8](repeating: 0, count: 65)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(key.pointer, OSSL_PKEY_PARAM_PUB_KEY, &point, point.count, &length) == 1,
              length == 65, point[0] == 0x04
        else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot read the P-256 public point")
        }
        return (Data(point[1..<33]), Data(point[33..<65]))
    }

    /// The 32 raw bytes of an Ed25519 public key.
    static func ed25519PublicBytes(of key: EVPKey) throws -> Data {
        var raw = [UInt8](repeating: 0, count: 32)
        var length = raw.count
        guard EVP_PKEY_get_raw_public_key(key.pointer, &raw, &length) == 1, length == 32 else {
            throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot read the Ed25519 public key")
        }
        return Data(raw)
    }

    /// The modulus and public exponent of an RSA key, big-endian without leading zeros.
    static func rsaComponents(of key: EVPKey) throws -> (modulus: Data, exponent: Data) {
        func component(_ name: String) throws -> Data {
            var number: OpaquePointer?
            guard EVP_PKEY_get_bn_param(key.pointer, name, &number) == 1, let number else {
                throw CryptoError.fromOpenSSL(.openSSLFailure, "cannot read the RSA key's \(name)")
            }
            defer { BN_free(number) }
            var bytes = [UInt8](repeating: 0, count: (Int(BN_num_bits(number)) + 7) / 8)
            _ = BN_bn2bin(number, &bytes)
            return Data(bytes)
        }
        return (try component(OSSL_PKEY_PARAM_RSA_N), try component(OSSL_PKEY_PARAM_RSA_E))
    }
}
