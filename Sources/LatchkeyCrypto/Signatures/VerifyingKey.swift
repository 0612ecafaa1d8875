#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A public key that verifies signatures: ES256 (P-256), Ed25519, or RS256 (RSA ≥ 2048
/// bits, RSASSA-PKCS1-v1_5 with SHA-256, RFC 8017 §8.2; verification only, for ID tokens
/// from other providers).
///
/// The verification context is prepared on first use and reused, so keys held for a long
/// time (a JWKS, a provider's credentials) verify at OpenSSL's full speed.
public struct VerifyingKey: Sendable {
    /// The kind of key, which fixes the one signature algorithm it verifies.
    public enum KeyType: Hashable, Sendable {
        /// NIST P-256: verifies ES256, DER-encoded signatures.
        case p256
        /// Ed25519: verifies 64-byte PureEdDSA signatures.
        case ed25519
        /// RSA: verifies RS256.
        case rsa
    }

    /// What this key is.
    public let keyType: KeyType
    /// The SubjectPublicKeyInfo, DER (RFC 5280 §4.1.2.7).
    public let spkiDER: Data
    private let openSSL: LazyPublicKey

    init(key: EVPKey, keyType: KeyType, spkiDER: Data? = nil) throws {
        self.keyType = keyType
        let spki = try spkiDER ?? OpenSSLKeys.spkiDER(of: key, type: keyType)
        self.spkiDER = spki
        self.openSSL = LazyPublicKey(parsed: key, spki: spki)
    }

    /// A P-256 or Ed25519 key kept as its SPKI bytes and imported into OpenSSL only when
    /// first used (docs/ARCHITECTURE.md, "The crypto core": listings carry public keys unparsed). The bytes must have the
    /// one DER form of such a key; whether the point is valid is checked on first use, and
    /// an invalid one never verifies.
    init(deferredSPKI spki: Data) throws {
        if spki.count == SPKIPrefix.p256.count + 64, spki.starts(with: SPKIPrefix.p256) {
            keyType = .p256
        } else if spki.count == SPKIPrefix.ed25519.count + 32, spki.starts(with: SPKIPrefix.ed25519) {
            keyType = .ed25519
        } else {
            throw CryptoError.invalidKey(reason: "not the SubjectPublicKeyInfo of a P-256 or Ed25519 key")
        }
        self.spkiDER = spki
        self.openSSL = LazyPublicKey(parsed: nil, spki: spki)
    }

    /// The OpenSSL key, imported on first use.
    var key: EVPKey {
        get throws { try openSSL.key() }
    }

    /// Parses a DER SubjectPublicKeyInfo holding a P-256, Ed25519 or RSA (2048–8192 bit)
    /// key. Anything else, or any trailing byte, is a ``CryptoError`` with code
    /// ``CryptoError/Code/invalidKey`` or ``CryptoError/Code/unsupportedAlgorithm``.
    public init(spkiDER der: some DataProtocol) throws {
        let (key, keyType) = try OpenSSLKeys.parsePublicKey(spkiDER: der)
        try self.init(key: key, keyType: keyType)
    }

    /// Parses a PEM `PUBLIC KEY` block (RFC 7468 §13).
    public init(pemRepresentation pem: String) throws {
        try self.init(spkiDER: PEMDocument(parsing: pem, expectedLabel: "PUBLIC KEY").der)
    }

    /// A P-256 key from its affine coordinates, 32 bytes each, big-endian (as in a JWK or
    /// a COSE key). The point must lie on the curve.
    public init(p256X x: some DataProtocol, y: some DataProtocol) throws {
        let key = try OpenSSLKeys.importP256(x: x, y: y)
        try self.init(key: key, keyType: .p256, spkiDER: Data(SPKIPrefix.p256) + Data(x) + Data(y))
    }

    /// An Ed25519 key from its 32 raw bytes (RFC 8032 §5.1.5).
    public init(ed25519RawRepresentation raw: some DataProtocol) throws {
        let key = try OpenSSLKeys.importEd25519(publicKey: raw)
        try self.init(key: key, keyType: .ed25519, spkiDER: Data(SPKIPrefix.ed25519) + Data(raw))
    }

    /// An RSA key from its modulus and public exponent, big-endian unsigned (RFC 7518 §6.3.1).
    public init(rsaModulus modulus: some DataProtocol, exponent: some DataProtocol) throws {
        try self.init(key: OpenSSLKeys.importRSA(modulus: modulus, exponent: exponent), keyType: .rsa)
    }

    /// The PEM `PUBLIC KEY` text.
    public var pemRepresentation: String {
        PEMDocument(label: "PUBLIC KEY", der: spkiDER).pemString
    }

    /// Whether `signature` is a valid signature of `message` by this key: ES256 with a DER
    /// signature for P-256, Ed25519 for Ed25519, RS256 for RSA. Malformed signatures are
    /// simply invalid: this never throws and never crashes on hostile bytes.
    public func isValidSignature(_ signature: some DataProtocol, for message: some DataProtocol) -> Bool {
        guard signature.count <= KeyInputLimits.maximumDERSize,
              let context = try? openSSL.verificationContext(digest: digest)
        else { return false }
        return context.verify(signature, for: message)
    }

    /// ES256 and RS256 hash with SHA-256 first; Ed25519 hashes internally.
    /// The same for `Data`, the common case: a concrete overload, so callers in other
    /// modules reach a specialised path instead of generic dispatch on every call.
    public func isValidSignature(_ signature: Data, for message: Data) -> Bool {
        guard signature.count <= KeyInputLimits.maximumDERSize,
              let context = try? openSSL.verificationContext(digest: digest)
        else { return false }
        return context.verify(signature, for: message)
    }

    private var digest: DigestAlgorithm? {
        switch keyType {
        case .p256, .rsa: .sha256
        case .ed25519: nil
        }
    }
}

extension VerifyingKey: Hashable {
    /// Two keys are equal when their SubjectPublicKeyInfo bytes are.
    public static func == (lhs: VerifyingKey, rhs: VerifyingKey) -> Bool {
        lhs.spkiDER == rhs.spkiDER
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(spkiDER)
    }
}
