#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto

/// The metadata of an attestation key's vault record: the AK itself is the record's TPM
/// key (made through ESAPI, kept as the same TSS2 blob tpm2-openssl's keys are), and
/// this says which attestation CA certified it and holds what the CA issued: the AIK
/// certificate, then the chain above it up to and including the CA's root.
///
/// One per TPM and CA: the AK is made the first time a credential is attested with that
/// CA and reused for every later one, at any provider that trusts the CA.
struct AttestationKeyRecord: VaultRecordMetadata, Sendable {
    /// Marks AK records among the vault's records (credentials are `webauthn`).
    static let kind = "tpm-attestation-key"
    /// Most certificates a record keeps (the AIK certificate and its chain).
    static let maximumCertificates = 4

    var kind: String
    /// The CA's issuer URL (``ProviderAddress/issuer``).
    var authority: String
    /// Base64url DER: the AIK certificate first, the CA's root last.
    var certificates: [String]

    init(authority: String, certificates: [X509Certificate]) {
        kind = Self.kind
        self.authority = authority
        self.certificates = certificates.map { Base64URL.encode($0.derEncoded) }
    }

    /// The certificates, parsed; nil when any is unreadable or there are too many.
    var parsedCertificates: [X509Certificate]? {
        guard (2...Self.maximumCertificates).contains(certificates.count) else { return nil }
        return try? certificates.map { try X509Certificate(derEncoded: Base64URL.decode($0)) }
    }
}
