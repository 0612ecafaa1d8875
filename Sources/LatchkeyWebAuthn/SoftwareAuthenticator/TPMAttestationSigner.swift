#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto

/// What a ``SoftwareAuthenticator`` needs to make `tpm` attestation statements (WebAuthn
/// L3 §8.3) for the TPM keys it creates: the TPM's attestation key (AK) and its AIK
/// certificate from an attestation CA, first, with any intermediates after it (the root
/// is the relying party's to hold). The AK certifies each new key with TPM2_Certify, so
/// a relying party that trusts the CA learns the key was made in that TPM and cannot
/// leave it (docs/SECURITY.md, "Proving keys live in the TPM").
public struct TPMAttestationSigner: Sendable, Hashable {
    public var attestationKey: TPMAttestationKey
    public var certificates: [X509Certificate]

    public init(attestationKey: TPMAttestationKey, certificates: [X509Certificate]) {
        self.attestationKey = attestationKey
        self.certificates = certificates
    }

    /// The AAGUID of a Latchkey TPM credential (attested credential data, WebAuthn L3
    /// §6.5.1): `56f86778-a17a-44f9-b56c-648ed551da5f`, a random version 4 UUID that names
    /// this authenticator model (a software client over the host's TPM). It is sent only
    /// with `tpm` attestation; unattested credentials report the zero AAGUID, since
    /// nothing vouches for a model then (docs/PROTOCOL.md section 10).
    public static let aaguid = Data([
        0x56, 0xF8, 0x67, 0x78, 0xA1, 0x7A, 0x44, 0xF9, 0xB5, 0x6C, 0x64, 0x8E, 0xD5, 0x51, 0xDA, 0x5F,
    ])

    /// The statement for a new credential: TPM2_Certify of `key` by the AK over the hash of
    /// authenticatorData ‖ clientDataHash (§8.3.2).
    func attest(_ authenticatorData: AuthenticatorData, clientDataHash: Data, key: TPMSigningKey) throws -> AttestationObject {
        let qualifying = try AttestationObject.tpmQualifyingData(authenticatorData, clientDataHash: clientDataHash)
        let certification: TPMCertification
        do {
            certification = try TPM.system().certify(key, with: attestationKey, qualifyingData: qualifying)
        } catch let error as CryptoError {
            throw WebAuthnError.attestationFailed(reason: "the TPM did not certify the new key: \(error.reason)", underlying: error)
        }
        return .tpm(authenticatorData, certification: certification, certificates: certificates)
    }
}
