/// Obtaining an AIK certificate from a provider's attestation CA (docs/PROTOCOL.md
/// section 10): the client shows its TPM's endorsement key certificate and its attestation
/// key; the CA answers with a secret only that TPM can recover for that key (TPM 2.0
/// Part 1 §24, credential activation); the recovered secret buys the certificate, once.
/// Byte strings are base64url without padding.
public enum AttestationExchange {
    /// `POST v1/attestation/activations`.
    public struct ActivationRequest: Codable, Hashable, Sendable {
        /// The RSA 2048 EK certificate, DER (from NV index 0x01C00002).
        public var endorsementCertificate: String
        /// The attestation key's `TPMT_PUBLIC`.
        public var attestationKey: String
        /// What the TPM says of itself (TPM2_GetCapability), for the certificate's
        /// subjectAltName.
        public var tpm: TPM

        public init(endorsementCertificate: String, attestationKey: String, tpm: TPM) {
            self.endorsementCertificate = endorsementCertificate
            self.attestationKey = attestationKey
            self.tpm = tpm
        }

        enum CodingKeys: String, CodingKey {
            case endorsementCertificate = "endorsement_certificate"
            case attestationKey = "attestation_key"
            case tpm
        }
    }

    /// The TPM's TPM_PT_MANUFACTURER, vendor strings and firmware version, as the
    /// certificate spells them (TCG EK Credential Profile §3.2.9): `id:` and hex.
    public struct TPM: Codable, Hashable, Sendable {
        public var manufacturer: String
        public var model: String
        public var version: String

        public init(manufacturer: String, model: String, version: String) {
            self.manufacturer = manufacturer
            self.model = model
            self.version = version
        }
    }

    /// `201` to an ``ActivationRequest``: TPM2_ActivateCredential's inputs, and the sealed
    /// activation to send back with the recovered secret within ``expiresIn`` seconds.
    public struct Activation: Codable, Hashable, Sendable {
        public var activation: String
        /// `TPM2B_ID_OBJECT`, marshalled.
        public var credentialBlob: String
        /// `TPM2B_ENCRYPTED_SECRET`, marshalled.
        public var encryptedSecret: String
        public var expiresIn: Int

        public init(activation: String, credentialBlob: String, encryptedSecret: String, expiresIn: Int) {
            self.activation = activation
            self.credentialBlob = credentialBlob
            self.encryptedSecret = encryptedSecret
            self.expiresIn = expiresIn
        }

        enum CodingKeys: String, CodingKey {
            case activation
            case credentialBlob = "credential_blob"
            case encryptedSecret = "encrypted_secret"
            case expiresIn = "expires_in"
        }
    }

    /// `POST v1/attestation/certificates`: the activation and the secret the TPM recovered.
    public struct CertificateRequest: Codable, Hashable, Sendable {
        public var activation: String
        public var credential: String

        public init(activation: String, credential: String) {
            self.activation = activation
            self.credential = credential
        }
    }

    /// `201` to a ``CertificateRequest``: the AIK certificate, DER, and the chain above it
    /// up to and including the CA's root (`GET v1/attestation/roots` publishes the root).
    public struct Certificate: Codable, Hashable, Sendable {
        public var certificate: String
        public var chain: [String]

        public init(certificate: String, chain: [String]) {
            self.certificate = certificate
            self.chain = chain
        }
    }
}
