#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto

/// A `tpm` attestation statement (WebAuthn L3 §8.3): an attestation key (AIK) in a TPM
/// certified the credential key (`certInfo` over `pubArea`, signed `sig`), and `x5c`
/// carries the AIK's certificate and its chain. ``verify(authenticatorData:clientDataHash:roots:at:)``
/// runs the §8.3.2 verification procedure and the §8.3.1 certificate requirements; what it
/// proves, and what it does not, is in docs/SECURITY.md.
///
/// ES256 AIKs only (`alg` -7): the keys Latchkey makes, and what tpm2-tss gives on swtpm.
public struct TPMAttestationStatement: Sendable {
    /// `tcg-kp-AIKCertificate` (§8.3.1: the AIK certificate's extended key usage).
    public static let aikCertificateUsage = X509Certificate.aikCertificateUsage
    /// `id-fido-gen-ce-aaguid` (§8.3.2: when present, it must name the authenticator's AAGUID).
    public static let aaguidExtension = "1.3.6.1.4.1.45724.1.1.4"
    /// The TPM's manufacturer, model and firmware version in the SAN's directory name
    /// (TCG EK Credential Profile §3.2.9).
    public static let manufacturerAttribute = X509Certificate.tpmManufacturerAttribute
    public static let modelAttribute = X509Certificate.tpmModelAttribute
    public static let versionAttribute = X509Certificate.tpmVersionAttribute
    /// `ver`: the TPM specification version the statement follows.
    public static let version = "2.0"

    public let algorithm: Int
    public let certificates: [X509Certificate]
    public let signature: Data
    public let certInfo: TPMSAttest
    public let pubArea: TPMTPublic

    /// Reads the statement map: `ver` "2.0", `alg`, `x5c` (1 to 4 certificates), `sig`,
    /// `certInfo`, `pubArea`. Bounded: each certificate by ``X509Certificate``'s limit,
    /// the structures by theirs.
    public init(_ statement: CBOR) throws(WebAuthnError) {
        func invalid(_ why: String) -> WebAuthnError { WebAuthnError.invalidAttestation(reason: "tpm statement: \(why)") }
        guard statement["ver"]?.textValue == Self.version else { throw invalid("ver must be \"2.0\"") }
        guard let algorithm = statement["alg"]?.intValue else { throw invalid("alg is missing") }
        guard algorithm == SigningAlgorithm.es256.coseIdentifier else {
            throw WebAuthnError.unsupportedAlgorithm(reason: "tpm statement: alg \(algorithm) is not ES256 (-7)")
        }
        guard case .array(let chain)? = statement["x5c"], (1...4).contains(chain.count) else {
            throw invalid("x5c must hold the AIK certificate and at most three more")
        }
        var certificates: [X509Certificate] = []
        for element in chain {
            guard let der = element.bytesValue else { throw invalid("an x5c element is not bytes") }
            do {
                certificates.append(try X509Certificate(derEncoded: der))
            } catch {
                throw WebAuthnError.invalidAttestation(reason: "tpm statement: an x5c certificate does not parse", underlying: error)
            }
        }
        guard let signature = statement["sig"]?.bytesValue, let certInfo = statement["certInfo"]?.bytesValue,
              let pubArea = statement["pubArea"]?.bytesValue
        else { throw invalid("sig, certInfo or pubArea is missing") }
        guard statement.mapEntries?.count == 6 else { throw invalid("holds members other than ver, alg, x5c, sig, certInfo, pubArea") }
        try self.init(certificates: certificates, signature: signature, certInfo: certInfo, pubArea: pubArea)
    }

    /// A statement from its parts, as another protocol carries a TPM2_Certify (an SSH
    /// certificate request, docs/PROTOCOL.md section 12): ES256, the AIK certificate and at
    /// most three more, the signature, `certInfo` and `pubArea`, each bounded by its parser.
    public init(certificates: [X509Certificate], signature: Data, certInfo: Data, pubArea: Data) throws(WebAuthnError) {
        guard (1...4).contains(certificates.count) else {
            throw WebAuthnError.invalidAttestation(reason: "tpm statement: x5c must hold the AIK certificate and at most three more")
        }
        guard signature.count <= 128 else { throw WebAuthnError.invalidAttestation(reason: "tpm statement: sig is longer than an ES256 signature") }
        algorithm = SigningAlgorithm.es256.coseIdentifier
        self.certificates = certificates
        self.signature = signature
        self.certInfo = try TPMSAttest(certInfo)
        self.pubArea = try TPMTPublic(pubArea)
    }

    /// The AIK certificate, `x5c[0]`.
    public var aikCertificate: X509Certificate { certificates[0] }

    /// The §8.3.2 verification procedure against the registration's authenticator data and
    /// client data hash, then the AIK certificate's §8.3.1 requirements and its chain to
    /// `roots` at `time`. Returns the AIK certificate (the attestation trust path) when
    /// every check holds; throws ``WebAuthnError/Code-swift.struct/invalidAttestation``
    /// naming the first that does not.
    @discardableResult
    public func verify(authenticatorData: AuthenticatorData, clientDataHash: Data, roots: [X509Certificate], at time: Date = Date()) throws(WebAuthnError) -> X509Certificate {
        guard let attested = authenticatorData.attestedCredentialData else {
            throw WebAuthnError.invalidAttestation(reason: "tpm attestation: the authenticator data holds no credential")
        }
        return try verify(
            certifying: attested.credentialPublicKey.verifyingKey, toBeSigned: authenticatorData.bytes + clientDataHash,
            aaguid: attested.aaguid, roots: roots, at: time
        )
    }

    /// The same checks for a TPM2_Certify another protocol carries: the certified key is
    /// `key` (P-256), made in the TPM and unable to leave it, `certInfo`'s extraData is
    /// SHA-256 of `toBeSigned` (for WebAuthn authenticatorData ‖ clientDataHash; for an
    /// SSH certificate request the proof's signed message, docs/PROTOCOL.md section 12),
    /// the AIK signed it, and the AIK certificate meets §8.3.1 and chains to `roots`.
    /// `aaguid`, when given, must match the certificate's AAGUID extension if it has one.
    @discardableResult
    public func verify(certifying key: VerifyingKey, toBeSigned: Data, aaguid: Data?, roots: [X509Certificate], at time: Date = Date()) throws(WebAuthnError) -> X509Certificate {
        func invalid(_ why: String) -> WebAuthnError { WebAuthnError.invalidAttestation(reason: "tpm attestation: \(why)") }
        // The key in pubArea is the certified key.
        guard pubArea.holds(key) else { throw invalid("pubArea holds another key than the one attested") }
        // Made in the TPM and unable to leave it (TPM 2.0 Part 1 §27.2: fixedTPM, fixedParent,
        // sensitiveDataOrigin). A TPM certifies any object it has loaded, and a software key
        // brought in with TPM2_LoadExternal or TPM2_Import cannot carry these attributes:
        // without this check a software key could claim `tpm`. §8.3.2 does not list it.
        let resident = TPMTPublic.Attribute.fixedTPM | TPMTPublic.Attribute.fixedParent | TPMTPublic.Attribute.sensitiveDataOrigin
        guard pubArea.objectAttributes & resident == resident else {
            throw invalid("pubArea's key was not made in the TPM or can leave it (fixedTPM, fixedParent and sensitiveDataOrigin must all be set)")
        }
        // certInfo: extraData over what was signed, and pubArea's name certified.
        try certInfo.check(certifies: pubArea, toBeSigned: toBeSigned, hash: .sha256)
        // sig: the AIK signed certInfo (DER ECDSA).
        let aik = aikCertificate
        let aikKey: VerifyingKey
        do {
            aikKey = try aik.publicKey
        } catch {
            throw WebAuthnError.invalidAttestation(reason: "tpm attestation: the AIK certificate's key does not parse", underlying: error)
        }
        guard aikKey.isValidSignature(signature, for: certInfo.bytes) else { throw invalid("sig is not the AIK's signature of certInfo") }
        // §8.3.1: the AIK certificate's requirements.
        guard aik.version == 3 else { throw invalid("the AIK certificate is not version 3") }
        guard aik.subjectIsEmpty else { throw invalid("the AIK certificate's subject is not empty") }
        guard let san = aik.subjectAlternativeName, san.critical else {
            throw invalid("the AIK certificate has no critical subjectAlternativeName")
        }
        let named = Set(san.directoryNameAttributes.map(\.oid))
        guard named.isSuperset(of: [Self.manufacturerAttribute, Self.modelAttribute, Self.versionAttribute]) else {
            throw invalid("the AIK certificate's subjectAlternativeName does not name the TPM's manufacturer, model and version")
        }
        guard aik.extendedKeyUsages?.contains(Self.aikCertificateUsage) == true else {
            throw invalid("the AIK certificate's extended key usage lacks tcg-kp-AIKCertificate (2.23.133.8.3)")
        }
        guard aik.basicConstraints == (present: true, isCA: false) else {
            throw invalid("the AIK certificate must carry basicConstraints with CA false")
        }
        if let aaguid, let value = aik.extensionValue(oid: Self.aaguidExtension) {
            // extnValue holds an OCTET STRING of the 16-byte AAGUID.
            guard value == Data([0x04, 0x10]) + aaguid else { throw invalid("the AIK certificate's AAGUID is not the authenticator's") }
        }
        guard aik.chains(to: roots, through: Array(certificates.dropFirst()), at: time) else {
            throw invalid("the AIK certificate does not chain to a trusted attestation root")
        }
        return aik
    }
}
