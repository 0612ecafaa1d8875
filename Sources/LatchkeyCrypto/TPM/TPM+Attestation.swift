#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// An attestation key (AK): ECC P-256, restricted to signing structures the TPM makes
/// itself (TPM2_Certify's TPMS_ATTEST), made in the TPM and kept outside only as its
/// wrapped blob. The attestation CA certifies it once (its AIK certificate, WebAuthn L3
/// §8.3.1) after credential activation; it then vouches for every credential key the
/// same TPM makes (docs/SECURITY.md, "Proving keys live in the TPM").
public struct TPMAttestationKey: Sendable, Hashable {
    let blob: TSS2KeyBlob

    /// The wrapped form to keep: PEM "TSS2 PRIVATE KEY", the form tpm2-openssl writes its
    /// keys in, so the vault keeps an AK as it keeps any TPM key.
    public var wrappedKey: Data { blob.pem }

    /// The public area (`TPMT_PUBLIC`, without its size): what the CA checks and names.
    public var publicArea: Data { blob.publicAreaContents }

    /// The AK's name: its name algorithm (SHA-256, 0x000B) ‖ SHA-256 of ``publicArea``
    /// (TPM 2.0 Part 1 §16), which TPM2_MakeCredential binds a credential to.
    public var name: Data {
        get throws { Data([0x00, 0x0B]) + (try DigestAlgorithm.sha256.hash(publicArea)) }
    }

    init(blob: TSS2KeyBlob) {
        self.blob = blob
    }

    /// A key kept from ``wrappedKey``. Checks only the framing; the TPM checks the rest
    /// when it loads the key.
    public init(wrappedKey: Data) throws {
        blob = try TSS2KeyBlob(pem: wrappedKey)
    }

    /// The AK a vault keeps as a TPM key (`KeyVault.storeKey(_:metadata:)`).
    public init(_ key: TPMSigningKey) throws {
        try self.init(wrappedKey: key.wrappedKey)
    }
}

/// What TPM2_Certify returned: WebAuthn's `certInfo`, `sig` and `pubArea` (L3 §8.3).
public struct TPMCertification: Sendable, Hashable {
    /// The TPMS_ATTEST the AK signed, without its size prefix.
    public let certInfo: Data
    /// The AK's ECDSA signature over ``certInfo`` with SHA-256, DER.
    public let signature: Data
    /// The certified key's `TPMT_PUBLIC`, without its size prefix.
    public let publicArea: Data
}

/// What a TPM says of itself (TPM2_GetCapability), for the subjectAlternativeName of an
/// AIK certificate (TCG EK Credential Profile 2.x §3.2.9; WebAuthn L3 §8.3.1).
public struct TPMDescription: Sendable, Hashable {
    /// TPM_PT_MANUFACTURER: four ASCII letters packed big-endian (IBM is 0x49424D00).
    public let manufacturer: UInt32
    /// TPM_PT_VENDOR_STRING_1…4, NULs removed.
    public let model: String
    /// TPM_PT_FIRMWARE_VERSION_1 and _2.
    public let firmwareVersion: UInt64

    public init(manufacturer: UInt32, model: String, firmwareVersion: UInt64) {
        self.manufacturer = manufacturer
        self.model = model
        self.firmwareVersion = firmwareVersion
    }

    /// tcg-at-tpmManufacturer's value: `id:` and eight upper-case hex digits.
    public var manufacturerID: String { "id:" + HexadecimalText.padded(manufacturer, digits: 8, uppercase: true) }
    /// tcg-at-tpmVersion's value: `id:` and the firmware version in hex.
    public var versionID: String { "id:" + HexadecimalText.padded(UInt32(firmwareVersion >> 32), digits: 8, uppercase: true) + HexadecimalText.padded(UInt32(firmwareVersion & 0xFFFF_FFFF), digits: 8, uppercase: true) }
}

extension TPM {
    /// NV index of the RSA 2048 EK certificate (TCG EK Credential Profile 2.x §2.2.1.4).
    public static let rsaEndorsementCertificateIndex: UInt32 = 0x01C0_0002

    /// A new attestation key in this TPM.
    public func createAttestationKey() throws -> TPMAttestationKey {
        TPMAttestationKey(blob: try withESAPI { try $0.createAttestationKey() })
    }

    /// The TPM's manufacturer, model and firmware version.
    public func describe() throws -> TPMDescription {
        try withESAPI { esapi in
            let manufacturer = try esapi.property(0x105) // TPM_PT_MANUFACTURER
            var model = [UInt8]()
            for property in UInt32(0x106)...0x109 { // TPM_PT_VENDOR_STRING_1…4
                let value = (try? esapi.property(property)) ?? 0
                model += withUnsafeBytes(of: value.bigEndian, Array.init)
            }
            let high = try esapi.property(0x10B), low = try esapi.property(0x10C) // TPM_PT_FIRMWARE_VERSION_1, _2
            let printable = model.filter { (0x20...0x7E).contains($0) }
            return TPMDescription(
                manufacturer: manufacturer,
                model: String(decoding: printable, as: UTF8.self).trimmingSpaces(),
                firmwareVersion: UInt64(high) << 32 | UInt64(low)
            )
        }
    }

    /// The certificate of the TPM's RSA 2048 endorsement key, read from NV, after checking
    /// that the key it certifies is this TPM's (the EK made from template L-1). Throws
    /// ``CryptoError/Code/tpmCommandRefused`` when the TPM has no such certificate.
    public func endorsementCertificate() throws -> X509Certificate {
        let (stored, modulus) = try withESAPI { esapi in
            (try esapi.readNV(Self.rsaEndorsementCertificateIndex, maximumSize: X509Limits.maximumDERSize), try esapi.endorsementKeyModulus())
        }
        // Some TPMs pad the index after the certificate: take the one DER SEQUENCE.
        let certificate = try X509Certificate(derEncoded: try Self.firstDERElement(stored))
        guard let certified = certificate.owner.rsaModulus(), ConstantTime.isEqual(certified, modulus) else {
            throw CryptoError.tpmCommandRefused(reason: "the EK certificate in NV 0x01C00002 is not for this TPM's RSA endorsement key")
        }
        return certificate
    }

    /// TPM2_Certify: `attestationKey` signs a statement that `key` (a key this TPM made,
    /// ``TPMSigningKey``) is one of its objects, with `qualifyingData` as the statement's
    /// extraData (for WebAuthn: the hash of authenticatorData ‖ clientDataHash, §8.3).
    public func certify(_ key: TPMSigningKey, with attestationKey: TPMAttestationKey, qualifyingData: Data) throws -> TPMCertification {
        let certified = try TSS2KeyBlob(pem: key.wrappedKey)
        let (attest, r, s) = try withESAPI { try $0.certify(certified, by: attestationKey.blob, qualifyingData: qualifyingData) }
        guard r.count <= 32, s.count <= 32 else {
            throw CryptoError.tpmCommandRefused(reason: "TPM2_Certify returned an ECDSA signature that is not P-256")
        }
        let raw = Data(repeating: 0, count: 32 - r.count) + r + Data(repeating: 0, count: 32 - s.count) + s
        return TPMCertification(
            certInfo: attest,
            signature: try ECDSASignature(rawRepresentation: raw).derRepresentation,
            publicArea: certified.publicAreaContents
        )
    }

    /// TPM2_ActivateCredential: the credential an attestation CA protected for this TPM's
    /// RSA EK and `attestationKey`'s name (``TPMCredentialProtection``). The TPM refuses
    /// (``CryptoError/Code/tpmCommandRefused``) a challenge made for another EK or
    /// another key.
    public func activateCredential(_ attestationKey: TPMAttestationKey, challenge: TPMCredentialProtection.Challenge) throws -> Data {
        guard challenge.credentialBlob.count <= 256, challenge.encryptedSecret.count <= 600 else {
            throw CryptoError.invalidParameter(reason: "a credential challenge is at most 256 and 600 bytes")
        }
        return try withESAPI {
            try $0.activateCredential(attestationKey.blob, credentialBlob: challenge.credentialBlob, secret: challenge.encryptedSecret)
        }
    }

    /// The first DER element of `bytes` (a certificate in an NV index that may be padded).
    static func firstDERElement(_ bytes: Data) throws -> Data {
        var reader = DERReader(Array(bytes), subject: .tpmStoredCertificate)
        let contents = try reader.element(tag: 0x30)
        let headerCount = contents.count < 0x80 ? 2 : (contents.count < 0x100 ? 3 : 4)
        return bytes.prefix(headerCount + contents.count)
    }
}
