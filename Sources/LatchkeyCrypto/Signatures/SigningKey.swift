#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A private key that signs: a device key pair's secret half.
///
/// A `Sendable` value over a `SignatureContext` that owns the `EVP_PKEY` and a
/// prepared signing context, so each signature skips OpenSSL's per-call set-up. The
/// private key never leaves OpenSSL memory except through ``pkcs8DERRepresentation``
/// or ``withPKCS8DER(_:)``.
public struct SigningKey: Sendable {
    let context: SignatureContext

    /// The algorithm this key signs with.
    public let algorithm: SigningAlgorithm

    /// The public half.
    public let publicKey: VerifyingKey

    init(key: EVPKey, algorithm: SigningAlgorithm) throws {
        self.context = try SignatureContext(.sign, key: key, digest: algorithm.digest)
        self.algorithm = algorithm
        self.publicKey = try VerifyingKey(key: key, keyType: algorithm == .es256 ? .p256 : .ed25519)
    }

    /// A new random key (P-256 from the shared curve template; Ed25519 from the CSPRNG).
    public static func generate(_ algorithm: SigningAlgorithm) throws -> SigningKey {
        try SigningKey(key: OpenSSLKeys.generate(algorithm), algorithm: algorithm)
    }

    /// Parses a PKCS#8 `PrivateKeyInfo` (RFC 5208 §5) holding a P-256 or Ed25519 key.
    public init(pkcs8DER der: some DataProtocol) throws {
        let (key, algorithm) = try OpenSSLKeys.parsePrivateKey(pkcs8DER: der)
        try self.init(key: key, algorithm: algorithm)
    }

    /// Parses a PEM `PRIVATE KEY` block (RFC 7468 §10: PKCS#8).
    public init(pemRepresentation pem: String) throws {
        var der = try PEMDocument(parsing: pem, expectedLabel: "PRIVATE KEY").der
        defer { secureZero(&der) }
        try self.init(pkcs8DER: der)
    }

    /// An Ed25519 key from its 32-byte seed (RFC 8032 §5.1.5; the JWK `d` of RFC 8037 §2).
    public init(ed25519Seed seed: some DataProtocol) throws {
        try self.init(key: OpenSSLKeys.importEd25519(seed: seed), algorithm: .ed25519)
    }

    /// Signs `message`: ES256 gives an ASN.1 DER `ECDSA-Sig-Value` (convert with
    /// ``ECDSASignature`` for JOSE), Ed25519 the 64-byte signature.
    public func signature(for message: some DataProtocol) throws -> Data {
        try context.sign(message)
    }

    /// The same for `Data`, the common case: a concrete overload, so callers in other
    /// modules reach a specialised path instead of generic dispatch on every call.
    public func signature(for message: Data) throws -> Data {
        try context.sign(message)
    }

    /// Calls `body` with the PKCS#8 DER of this key and wipes the bytes afterwards. This
    /// is how the key vault seals a key without a copy lingering in memory.
    public func withPKCS8DER<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try OpenSSLKeys.withPKCS8DER(of: context.key, body)
    }

    /// The PKCS#8 DER of this key. The returned `Data` is a copy the caller owns and
    /// should wipe; prefer ``withPKCS8DER(_:)``.
    public var pkcs8DERRepresentation: Data {
        get throws { try withPKCS8DER { Data($0) } }
    }
}
