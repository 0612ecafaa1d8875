#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto

/// A TPM object's public area, `TPMT_PUBLIC` (TPM 2.0 Library Part 2), as a `tpm`
/// attestation statement's `pubArea` carries it (WebAuthn L3 §8.3): the credential key as
/// the TPM holds it. Its ``name`` is what the TPM's `certInfo` vouches for, so the public
/// area is tied to the attestation by hashing these exact bytes, never a re-encoding.
///
/// Only ECC keys on NIST P-256 are read: the keys Latchkey makes in a TPM (ES256). An RSA
/// public area, or another curve, is ``WebAuthnError/Code-swift.struct/unsupportedAlgorithm``.
public struct TPMTPublic: Hashable, Sendable {
    /// `TPM_ALG_ID` values used here (TPM 2.0 Library Part 2, "TPM_ALG_ID").
    public enum Algorithm {
        public static let rsa: UInt16 = 0x0001
        public static let sha1: UInt16 = 0x0004
        public static let sha256: UInt16 = 0x000B
        public static let sha384: UInt16 = 0x000C
        public static let sha512: UInt16 = 0x000D
        public static let null: UInt16 = 0x0010
        public static let ecc: UInt16 = 0x0023
    }

    /// `TPM_ECC_NIST_P256` (TPM 2.0 Library Part 2, "TPM_ECC_CURVE").
    public static let nistP256: UInt16 = 0x0003

    /// The bytes as given, which ``name`` hashes.
    public let bytes: Data
    /// `nameAlg`: the hash of the object's name.
    public let nameAlgorithm: UInt16
    /// `objectAttributes` (`fixedTPM`, `sensitiveDataOrigin`, `sign`, …).
    public let objectAttributes: UInt32
    /// `authPolicy`.
    public let authPolicy: Data
    /// The symmetric algorithm of the parameters; ``Algorithm/null`` for a signing key.
    public let symmetric: UInt16
    /// The signing scheme of the parameters; ``Algorithm/null`` when the key may use any.
    public let scheme: UInt16
    /// The key's curve (``nistP256``).
    public let curve: UInt16
    /// The public point's coordinates, as the TPM gives them.
    public let x: Data
    public let y: Data

    /// The attributes WebAuthn's verifiers look at (TPM 2.0 Library Part 2, "TPMA_OBJECT").
    public enum Attribute {
        public static let fixedTPM: UInt32 = 1 << 1
        public static let fixedParent: UInt32 = 1 << 4
        public static let sensitiveDataOrigin: UInt32 = 1 << 5
        public static let sign: UInt32 = 1 << 18
    }

    /// Reads a `TPMT_PUBLIC` that fills `bytes` exactly.
    public init(_ bytes: Data) throws(WebAuthnError) {
        guard bytes.count <= 1024 else {
            throw WebAuthnError.malformedTPMStructure(reason: "pubArea: \(bytes.count) bytes, over the 1024 a TPMT_PUBLIC can take")
        }
        self.bytes = Data(bytes)
        var reader = TPMReader(self.bytes, structure: "pubArea")
        let type = try reader.uint16("type")
        guard type == Algorithm.ecc else {
            throw WebAuthnError.unsupportedAlgorithm(reason: "pubArea: key type 0x\(String(type, radix: 16)) is not ECC; Latchkey reads ECC P-256 TPM keys")
        }
        nameAlgorithm = try reader.uint16("nameAlg")
        _ = try Self.digest(nameAlgorithm)
        objectAttributes = try reader.uint32("objectAttributes")
        authPolicy = try reader.sized("authPolicy", maximum: 64)
        // TPMS_ECC_PARMS: symmetric (TPMT_SYM_DEF_OBJECT), scheme (TPMT_ECC_SCHEME),
        // curveID, kdf (TPMT_KDF_SCHEME); each algorithm but NULL carries its details.
        symmetric = try reader.uint16("symmetric.algorithm")
        if symmetric != Algorithm.null {
            _ = try reader.uint16("symmetric.keyBits")
            _ = try reader.uint16("symmetric.mode")
        }
        scheme = try reader.uint16("scheme.scheme")
        if scheme != Algorithm.null { _ = try reader.uint16("scheme.hashAlg") }
        curve = try reader.uint16("curveID")
        guard curve == Self.nistP256 else {
            throw WebAuthnError.unsupportedAlgorithm(reason: "pubArea: curve 0x\(String(curve, radix: 16)) is not NIST P-256")
        }
        let kdf = try reader.uint16("kdf.scheme")
        if kdf != Algorithm.null { _ = try reader.uint16("kdf.hashAlg") }
        // TPMS_ECC_POINT: two TPM2B_ECC_PARAMETERs.
        x = try reader.sized("unique.x", maximum: 32)
        y = try reader.sized("unique.y", maximum: 32)
        try reader.finish()
    }

    /// The object's name: `nameAlg` (2 bytes, big-endian) followed by the hash of the public
    /// area with it (TPM 2.0 Library Part 1, "Names"). WebAuthn L3 §8.3.2 compares it with
    /// the name in `certInfo`.
    public var name: Data {
        get throws(WebAuthnError) {
            let digest = try Self.digest(nameAlgorithm)
            let hash: Data
            do {
                hash = try digest.hash(bytes)
            } catch {
                throw WebAuthnError.invalidAttestation(reason: "pubArea: cannot hash the public area", underlying: error)
            }
            return Data([UInt8(nameAlgorithm >> 8), UInt8(nameAlgorithm & 0xFF)]) + hash
        }
    }

    /// Whether the public area holds `key`, the credential public key of the authenticator
    /// data (WebAuthn L3 §8.3.2: "the public key … in pubArea is identical to the
    /// credentialPublicKey in the attestedCredentialData"). Coordinates compare as
    /// unsigned numbers of 32 bytes, whatever leading zeros the TPM left out.
    public func holds(_ key: COSEKey) -> Bool {
        key.algorithm == .es256 && holds(key.verifyingKey)
    }

    /// Whether the public area holds the P-256 `key` (any other kind never matches).
    public func holds(_ key: VerifyingKey) -> Bool {
        guard key.keyType == .p256, x.count <= 32, y.count <= 32 else { return false }
        let point = key.spkiDER.suffix(64)
        let padded = Data(count: 32 - x.count) + x + Data(count: 32 - y.count) + y
        return padded == Data(point)
    }

    /// The digest a `TPM_ALG_ID` names; SHA-1 is refused, as WebAuthn's verifiers refuse it.
    static func digest(_ algorithm: UInt16) throws(WebAuthnError) -> DigestAlgorithm {
        switch algorithm {
        case Algorithm.sha256: return .sha256
        case Algorithm.sha384: return .sha384
        case Algorithm.sha512: return .sha512
        default:
            throw WebAuthnError.unsupportedAlgorithm(reason: "TPM hash algorithm 0x\(String(algorithm, radix: 16)) is not SHA-256, SHA-384 or SHA-512")
        }
    }
}
