#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension X509Certificate {
    /// The AIK certificate's extended key usage, tcg-kp-AIKCertificate (WebAuthn L3 §8.3.1).
    public static let aikCertificateUsage = "2.23.133.8.3"
    /// The subjectAltName attributes naming a TPM (TCG EK Credential Profile 2.x §3.2.9):
    /// tcg-at-tpmManufacturer, tcg-at-tpmModel, tcg-at-tpmVersion.
    public static let tpmManufacturerAttribute = "2.23.133.2.1"
    public static let tpmModelAttribute = "2.23.133.2.2"
    public static let tpmVersionAttribute = "2.23.133.2.3"

    /// A self-signed CA certificate for `key` (ES256): basicConstraints CA critical,
    /// keyUsage keyCertSign and cRLSign critical, a subject key identifier.
    public static func selfSignedAuthority(commonName: String, key: SigningKey, serial: Data, notBefore: Date, notAfter: Date) throws -> X509Certificate {
        guard key.algorithm == .es256 else { throw CryptoError.unsupportedAlgorithm(reason: "a certificate authority's key here is ES256") }
        let issued = try X509Pointer.issue(
            serial: serial, subjectCommonName: commonName, publicKey: key.context.key, notBefore: notBefore, notAfter: notAfter,
            extensions: [.basicConstraints(ca: true), .certificateSigning, .subjectKeyIdentifier, .authorityKeyIdentifier],
            issuer: nil, signingKey: key.context.key
        )
        return try X509Certificate(derEncoded: try issued.derEncoded)
    }

    /// An AIK certificate as WebAuthn L3 §8.3.1 requires it, for the attestation key
    /// `publicKey` of the TPM `tpm`, issued by `issuer` with `issuerKey`: version 3, an
    /// empty subject, a critical subjectAltName whose directory name gives the TPM's
    /// manufacturer, model and firmware version (from the TPM's own properties), the EKU
    /// 2.23.133.8.3 (the only one), basicConstraints CA false, and an authority key
    /// identifier equal to the issuer's subject key identifier.
    public static func attestationKeyCertificate(
        for publicKey: VerifyingKey, tpm: TPMDescription, issuer: X509Certificate, issuerKey: SigningKey,
        serial: Data, notBefore: Date, notAfter: Date
    ) throws -> X509Certificate {
        guard publicKey.keyType == .p256, issuerKey.algorithm == .es256 else {
            throw CryptoError.unsupportedAlgorithm(reason: "AIK certificates here are for P-256 keys, signed with ES256")
        }
        let issued = try X509Pointer.issue(
            serial: serial, subjectCommonName: nil, publicKey: publicKey.key, notBefore: notBefore, notAfter: notAfter,
            extensions: [
                .directoryNameAlternativeName([
                    (tpmManufacturerAttribute, tpm.manufacturerID), (tpmModelAttribute, tpm.model), (tpmVersionAttribute, tpm.versionID),
                ]),
                .extendedKeyUsage([aikCertificateUsage]),
                .basicConstraints(ca: false),
                .authorityKeyIdentifier,
                .subjectKeyIdentifier,
            ],
            issuer: issuer.owner, signingKey: issuerKey.context.key
        )
        return try X509Certificate(derEncoded: try issued.derEncoded)
    }
}
