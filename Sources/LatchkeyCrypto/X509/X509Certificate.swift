#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// An X.509 certificate (RFC 5280), read by OpenSSL and never modified: what a relying
/// party needs of an attestation certificate (WebAuthn L3 §8.3.1 for a TPM's AIK
/// certificate) and whether it chains to roots the party trusts.
public struct X509Certificate: Hashable, Sendable {
    /// The DER bytes as given.
    public let derEncoded: Data
    let owner: X509Pointer

    /// Parses one DER certificate (at most 16 KiB) that fills `der` exactly.
    public init(derEncoded der: some DataProtocol) throws(CryptoError) {
        derEncoded = Data(der)
        owner = try X509Pointer.parse(derEncoded)
    }

    public static func == (lhs: X509Certificate, rhs: X509Certificate) -> Bool { lhs.derEncoded == rhs.derEncoded }
    public func hash(into hasher: inout Hasher) { hasher.combine(derEncoded) }

    /// The `version` field: 3 for a certificate with extensions.
    public var version: Int { owner.version }

    /// Whether the subject is an empty name, as §8.3.1 requires of an AIK certificate
    /// (the TPM is named in the subjectAlternativeName instead).
    public var subjectIsEmpty: Bool { owner.subjectEntryCount == 0 }

    /// The subject's public key.
    public var publicKey: VerifyingKey {
        get throws { try VerifyingKey(spkiDER: try owner.subjectPublicKeyInfo()) }
    }

    /// Whether basicConstraints is present, and whether it marks a CA.
    public var basicConstraints: (present: Bool, isCA: Bool) {
        let constraints = owner.basicConstraints
        return (constraints.present, constraints.ca)
    }

    /// The extended key usages' OIDs, dotted, in the certificate's order; nil when absent.
    public var extendedKeyUsages: [String]? { owner.extendedKeyUsages }

    /// The subjectAlternativeName's criticality and the (OID, value) attributes of its
    /// directory names, in order; nil when absent. A TPM's AIK certificate names the TPM's
    /// manufacturer (2.23.133.2.1), model (2.23.133.2.2) and firmware version (2.23.133.2.3)
    /// there (TCG EK Credential Profile, §3.2.9).
    public var subjectAlternativeName: (critical: Bool, directoryNameAttributes: [(oid: String, value: String)])? {
        owner.subjectAlternativeName
    }

    /// The DER value of the extension with dotted OID `oid` (for example WebAuthn's AAGUID
    /// extension, 1.3.6.1.4.1.45724.1.1.4); nil when absent.
    public func extensionValue(oid: String) -> Data? { owner.extensionValue(oid) }

    /// The authorityKeyIdentifier's keyIdentifier, and the subjectKeyIdentifier.
    public var authorityKeyIdentifier: Data? { owner.authorityKeyIdentifier }
    public var subjectKeyIdentifier: Data? { owner.subjectKeyIdentifier }

    /// Whether this certificate chains to one of `roots`, through `intermediates`, and
    /// every certificate of the path is valid at `time` (RFC 5280 §6.1).
    public func chains(to roots: [X509Certificate], through intermediates: [X509Certificate] = [], at time: Date = Date()) -> Bool {
        owner.chains(to: roots.map(\.owner), through: intermediates.map(\.owner), at: time)
    }
}
