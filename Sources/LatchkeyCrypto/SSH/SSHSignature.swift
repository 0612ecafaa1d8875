#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// An SSH signature blob (RFC 4253 §6.6): `string algorithm, string signature`, where an
/// `ecdsa-sha2-nistp256` signature is `mpint r, mpint s` over SHA-256 (RFC 5656 §3.1.2)
/// and an `ssh-ed25519` one the 64 bytes of PureEdDSA (RFC 8709 §6).
public struct SSHSignature: Hashable, Sendable {
    public let algorithm: SSHPublicKey.Algorithm
    /// The blob as it goes on the wire.
    public let wireBlob: Data
    /// The signature as the crypto core verifies it: DER for P-256, 64 bytes for Ed25519,
    /// read from the blob once.
    let signature: Data

    /// The longest signature blob read.
    public static let maximumBlobLength = 256

    /// The SSH form of a signature the crypto core made: DER `ECDSA-Sig-Value` for P-256,
    /// 64 bytes for Ed25519 (what ``SigningKey/signature(for:)-(Data)`` and the vault's
    /// keys give).
    public init(algorithm: SSHPublicKey.Algorithm, signature: Data) throws {
        var writer = SSHWireWriter()
        writer.string(algorithm.rawValue)
        switch algorithm {
        case .ecdsaP256:
            let raw = try ECDSASignature(derRepresentation: signature).rawRepresentation
            writer.nested { inner in
                inner.mpint(unsigned: raw.prefix(32))
                inner.mpint(unsigned: raw.suffix(32))
            }
        case .ed25519:
            guard signature.count == 64 else { throw CryptoError.invalidSignatureEncoding(reason: "an Ed25519 signature is 64 bytes, not \(signature.count)") }
            writer.string(signature)
        }
        self.algorithm = algorithm
        self.signature = signature
        wireBlob = writer.bytes
    }

    /// `key`'s signature of `message`, in SSH form.
    public static func sign(_ message: Data, with key: SigningKey) throws -> SSHSignature {
        let algorithm: SSHPublicKey.Algorithm = key.algorithm == .ed25519 ? .ed25519 : .ecdsaP256
        return try SSHSignature(algorithm: algorithm, signature: try key.signature(for: message))
    }

    /// Parses a blob; its algorithm must be one of the two.
    public init(wireBlob blob: Data) throws {
        guard blob.count <= Self.maximumBlobLength else {
            throw CryptoError.invalidSignatureEncoding(reason: "an SSH signature of \(blob.count) bytes, more than \(Self.maximumBlobLength)")
        }
        var reader = SSHWireReader(blob, subject: "SSH signature")
        let name = try reader.text(maximumLength: 64, "algorithm")
        guard let algorithm = SSHPublicKey.Algorithm(rawValue: name) else {
            throw CryptoError.unsupportedAlgorithm(reason: "SSH signature algorithm \(name.quotedForError) is not supported")
        }
        switch algorithm {
        case .ecdsaP256:
            var inner = try reader.nested(maximumLength: 80, "ECDSA signature")
            let r = try inner.unsignedMPInt(maximumByteCount: 32, "r")
            let s = try inner.unsignedMPInt(maximumByteCount: 32, "s")
            try inner.expectEnd()
            signature = try ECDSASignature(rawRepresentation: Data(count: 32 - r.count) + r + Data(count: 32 - s.count) + s).derRepresentation
        case .ed25519:
            signature = try reader.string(maximumLength: 64, "Ed25519 signature")
            guard signature.count == 64 else { throw reader.malformed("an Ed25519 signature that is not 64 bytes") }
        }
        try reader.expectEnd()
        self.algorithm = algorithm
        wireBlob = blob
    }

    /// Whether this is `key`'s signature of `message`; false for a signature of the other
    /// algorithm or one that does not verify, never a throw.
    public func isValid(for message: Data, by key: SSHPublicKey) -> Bool {
        key.algorithm == algorithm && key.verifyingKey.isValidSignature(signature, for: message)
    }

    public static func == (lhs: SSHSignature, rhs: SSHSignature) -> Bool {
        lhs.wireBlob == rhs.wireBlob
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(wireBlob)
    }
}
