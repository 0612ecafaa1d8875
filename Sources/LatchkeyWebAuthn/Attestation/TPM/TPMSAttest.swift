#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto

/// What a TPM signs when it certifies a key, `TPMS_ATTEST` of type
/// `TPM_ST_ATTEST_CERTIFY` (TPM 2.0 Library Part 2), as a `tpm` attestation statement's
/// `certInfo` carries it (WebAuthn L3 §8.3). The TPM fills in `magic` itself, so a value
/// a key outside the TPM signed cannot pass for one; `extraData` is the hash the caller
/// asked to have signed, and `attested` names the certified key.
public struct TPMSAttest: Hashable, Sendable {
    /// `TPM_GENERATED_VALUE`: "\xffTCG".
    public static let generatedMagic: UInt32 = 0xFF54_4347
    /// `TPM_ST_ATTEST_CERTIFY`.
    public static let certifyType: UInt16 = 0x8017

    /// The bytes as given, which the attestation key signed.
    public let bytes: Data
    /// `qualifiedSigner`: the name of the key that signed.
    public let qualifiedSigner: Data
    /// `extraData`: for WebAuthn, the hash of authenticatorData ‖ clientDataHash.
    public let extraData: Data
    /// `clockInfo`: `clock`, `resetCount`, `restartCount`, `safe` (obfuscated for keys
    /// outside the endorsement hierarchy; read, never trusted).
    public let clock: UInt64
    public let resetCount: UInt32
    public let restartCount: UInt32
    public let safe: Bool
    /// `firmwareVersion`.
    public let firmwareVersion: UInt64
    /// `attested.certify.name`: the certified key's name (``TPMTPublic/name``).
    public let certifiedName: Data
    /// `attested.certify.qualifiedName`.
    public let certifiedQualifiedName: Data

    /// Reads a `TPMS_ATTEST` that fills `bytes` exactly; refuses one the TPM did not
    /// generate (`magic`) or that certifies nothing (`type`), as WebAuthn L3 §8.3.2 does.
    public init(_ bytes: Data) throws(WebAuthnError) {
        guard bytes.count <= 1024 else {
            throw WebAuthnError.malformedTPMStructure(reason: "certInfo: \(bytes.count) bytes, over the 1024 a TPMS_ATTEST can take")
        }
        self.bytes = Data(bytes)
        var reader = TPMReader(self.bytes, structure: "certInfo")
        guard try reader.uint32("magic") == Self.generatedMagic else {
            throw WebAuthnError.invalidAttestation(reason: "certInfo: magic is not TPM_GENERATED_VALUE; the TPM did not make it")
        }
        guard try reader.uint16("type") == Self.certifyType else {
            throw WebAuthnError.invalidAttestation(reason: "certInfo: type is not TPM_ST_ATTEST_CERTIFY")
        }
        // A name is a 2-byte algorithm and a digest of up to 64 bytes (or a 4-byte handle).
        qualifiedSigner = try reader.sized("qualifiedSigner", maximum: 66)
        extraData = try reader.sized("extraData", maximum: 64)
        clock = try reader.uint64("clockInfo.clock")
        resetCount = try reader.uint32("clockInfo.resetCount")
        restartCount = try reader.uint32("clockInfo.restartCount")
        safe = try reader.uint8("clockInfo.safe") != 0
        firmwareVersion = try reader.uint64("firmwareVersion")
        certifiedName = try reader.sized("attested.name", maximum: 66)
        certifiedQualifiedName = try reader.sized("attested.qualifiedName", maximum: 66)
        try reader.finish()
    }

    /// The checks of WebAuthn L3 §8.3.2 that need no certificate: `extraData` is the hash,
    /// by the statement's algorithm (`hash`), of authenticatorData ‖ clientDataHash, so the
    /// TPM signed this very registration; and the certified name is `pubArea`'s, so the
    /// key in `pubArea` is the one the TPM holds. The signature by the attestation key and
    /// its certificate are checked by the caller.
    public func check(certifies pubArea: TPMTPublic, toBeSigned: Data, hash: DigestAlgorithm) throws(WebAuthnError) {
        let expected: Data
        do {
            expected = try hash.hash(toBeSigned)
        } catch {
            throw WebAuthnError.invalidAttestation(reason: "certInfo: cannot hash the signed data", underlying: error)
        }
        guard extraData == expected else {
            throw WebAuthnError.invalidAttestation(reason: "certInfo: extraData is not the hash of what was attested (authenticatorData and clientDataHash, or the request)")
        }
        guard certifiedName == (try pubArea.name) else {
            throw WebAuthnError.invalidAttestation(reason: "certInfo: the certified name is not pubArea's; it vouches for another key")
        }
    }
}
