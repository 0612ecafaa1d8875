#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto

extension AttestationObject {
    /// `tpm` attestation (WebAuthn L3 §8.3) of `authenticatorData`: the TPM's
    /// ``TPMCertification`` of the credential key, whose qualifying data must have been the
    /// SHA-256 of authenticatorData ‖ clientDataHash (``tpmQualifyingData(_:clientDataHash:)``),
    /// and `certificates`, the AIK certificate first, then any intermediates (the root is
    /// the relying party's to have). `alg` is ES256 (-7): the AK signs ECDSA with SHA-256.
    public static func tpm(_ authenticatorData: AuthenticatorData, certification: TPMCertification, certificates: [X509Certificate]) -> AttestationObject {
        AttestationObject(
            format: AttestationStatementFormat.tpm.rawValue,
            statement: .map([
                .init(.text("ver"), .text(TPMAttestationStatement.version)),
                .init(.text("alg"), .integer(SigningAlgorithm.es256.coseIdentifier)),
                .init(.text("x5c"), .array(certificates.map { .bytes($0.derEncoded) })),
                .init(.text("sig"), .bytes(certification.signature)),
                .init(.text("certInfo"), .bytes(certification.certInfo)),
                .init(.text("pubArea"), .bytes(certification.publicArea)),
            ]),
            authenticatorData: authenticatorData
        )
    }

    /// What TPM2_Certify must carry as extraData for a `tpm` statement with alg ES256:
    /// SHA-256 of authenticatorData ‖ clientDataHash (§8.3.2, "attToBeSigned").
    public static func tpmQualifyingData(_ authenticatorData: AuthenticatorData, clientDataHash: Data) throws -> Data {
        try DigestAlgorithm.sha256.hash(authenticatorData.bytes + clientDataHash)
    }
}
