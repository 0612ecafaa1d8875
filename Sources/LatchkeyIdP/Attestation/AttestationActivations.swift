import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyWebAuthn
import Synchronization

/// Issuing AIK certificates after credential activation (docs/PROTOCOL.md section 10;
/// TPM 2.0 Part 1 §24): a TPM shows its endorsement key (EK) certificate and an
/// attestation key (AK); if the EK certificate chains to the TPM makers' roots
/// (`--ek-roots`) and the AK is a restricted signing key that cannot leave its TPM, the
/// CA encrypts a fresh secret to the EK, bound to the AK's name. Only the TPM that holds
/// that EK, with that AK loaded, recovers it; the secret then buys one certificate.
///
/// Nothing is stored until the secret comes back: the activation travels to the client
/// sealed (``TicketSealer``), and its id is spent once (`spent_tickets`) when the
/// certificate is issued, so a replayed activation gets nothing.
final class AttestationActivations: Sendable {
    private let context: ProviderContext

    /// How long the client has to come back with the secret.
    static let lifetime: TimeInterval = 300
    private static let purpose = "tpm-activation"

    init(context: ProviderContext) {
        self.context = context
    }

    /// What the sealed activation carries.
    private struct Sealed: Codable {
        var id: String
        var attestationKey: Data
        var manufacturer: UInt32
        var model: String
        var firmwareVersion: UInt64
        var secretDigest: Data
        var expiresAt: Date
    }

    /// Checks the EK certificate and the AK, and answers with the activation.
    func begin(_ request: AttestationExchange.ActivationRequest, now: Date = ProviderClock.now) async throws -> AttestationExchange.Activation {
        _ = try await context.attestationAuthority()
        guard let certificateBytes = try? Base64URL.decode(request.endorsementCertificate),
              let endorsement = try? X509Certificate(derEncoded: certificateBytes)
        else {
            throw ProviderError.badRequest(.invalidRequest, "endorsement_certificate must be a DER X.509 certificate, base64url")
        }
        let roots = context.configuration.endorsementRoots
        guard !roots.isEmpty else {
            throw ProviderError.accessDenied("the attestation CA trusts no TPM maker yet (serve --ek-roots FILE.pem)")
        }
        guard endorsement.chains(to: roots, at: now) else {
            throw ProviderError.badRequest(.invalidEndorsement, "the endorsement key certificate does not chain to a TPM maker this CA trusts")
        }
        guard let areaBytes = try? Base64URL.decode(request.attestationKey), let area = try? TPMTPublic(areaBytes) else {
            throw ProviderError.badRequest(.invalidEndorsement, "attestation_key must be a TPMT_PUBLIC of an ECC P-256 key, base64url")
        }
        try Self.checkAttestationKey(area)
        let tpm = try Self.description(request.tpm)

        var secret = try SecureRandom.bytes(count: TPMCredentialProtection.maximumCredentialSize)
        defer { secret.resetBytes(in: 0..<secret.count) }
        let challenge: TPMCredentialProtection.Challenge
        do {
            challenge = try TPMCredentialProtection.makeCredential(secret, endorsementKey: endorsement, objectName: try area.name)
        } catch {
            throw ProviderError.badRequest(.invalidEndorsement, "the endorsement key certificate must hold an RSA 2048 key (NV index 0x01C00002)", underlying: error)
        }
        let sealed = Sealed(
            id: try ProviderContext.randomToken(), attestationKey: areaBytes, manufacturer: tpm.manufacturer, model: tpm.model,
            firmwareVersion: tpm.firmwareVersion, secretDigest: try DigestAlgorithm.sha256.hash(secret),
            expiresAt: now.addingTimeInterval(Self.lifetime)
        )
        return AttestationExchange.Activation(
            activation: try context.tickets.seal(sealed, purpose: Self.purpose),
            credentialBlob: Base64URL.encode(challenge.credentialBlob), encryptedSecret: Base64URL.encode(challenge.encryptedSecret),
            expiresIn: Int(Self.lifetime)
        )
    }

    /// Checks the recovered secret, spends the activation, and issues the certificate.
    func finish(_ request: AttestationExchange.CertificateRequest, now: Date = ProviderClock.now) async throws -> AttestationExchange.Certificate {
        let authority = try await context.attestationAuthority()
        guard let sealed = try context.tickets.open(Sealed.self, from: request.activation, purpose: Self.purpose), sealed.expiresAt > now else {
            throw ProviderError.badRequest(.invalidActivation, "the activation is unknown or has expired; start again")
        }
        guard let credential = try? Base64URL.decode(request.credential), credential.count <= 64,
              ConstantTime.isEqual(try DigestAlgorithm.sha256.hash(credential), sealed.secretDigest)
        else {
            throw ProviderError.badRequest(.invalidActivation, "the credential is not the one the activation protected: the TPM that holds this endorsement key must recover it with this attestation key")
        }
        let area = try TPMTPublic(sealed.attestationKey)
        let attestationKey = try VerifyingKey(p256X: area.x, y: area.y)
        let id = sealed.id, expiresAt = sealed.expiresAt
        // Made first, kept only if the activation is spent now: the certificate and its
        // `attestation.certified` event are one decision.
        let certificate = try authority.certify(
            attestationKey, tpm: TPMDescription(manufacturer: sealed.manufacturer, model: sealed.model, firmwareVersion: sealed.firmwareVersion), now: now
        )
        // Never the recovered credential: it is the activation's secret.
        let event = AuditEntry(.attestationCertified, actor: .anonymous, now: now)
        let audit = context.audit
        let spent = try await context.database.transaction { transaction in
            guard try await SpentTickets.spend(id, until: expiresAt, in: transaction) else { return false }
            try await audit.record(event, in: transaction)
            return true
        }
        guard spent else {
            throw ProviderError.badRequest(.invalidActivation, "this activation was already used; start again")
        }
        return AttestationExchange.Certificate(
            certificate: Base64URL.encode(certificate.derEncoded), chain: [Base64URL.encode(authority.root.derEncoded)]
        )
    }

    /// The AK must be a key the TPM made and keeps (fixedTPM, fixedParent,
    /// sensitiveDataOrigin), restricted to signing what the TPM itself attests (restricted,
    /// sign, not decrypt), with ECDSA and a SHA-256 name: otherwise "signed by the AK" would
    /// not mean "said by the TPM" (TPM 2.0 Part 1 §25.2; TCG EK Credential Profile §2.1).
    static func checkAttestationKey(_ area: TPMTPublic) throws {
        let required = TPMTPublic.Attribute.fixedTPM | TPMTPublic.Attribute.fixedParent | TPMTPublic.Attribute.sensitiveDataOrigin
            | TPMTPublic.Attribute.sign | restricted
        guard area.objectAttributes & required == required, area.objectAttributes & decrypt == 0 else {
            throw ProviderError.badRequest(.invalidEndorsement, "the attestation key must be a restricted signing key that never leaves its TPM (fixedTPM, fixedParent, sensitiveDataOrigin, restricted, sign; not decrypt)")
        }
        guard area.nameAlgorithm == TPMTPublic.Algorithm.sha256, area.scheme == ecdsa else {
            throw ProviderError.badRequest(.invalidEndorsement, "the attestation key must sign with ECDSA and be named with SHA-256")
        }
    }

    private static let restricted: UInt32 = 1 << 16
    private static let decrypt: UInt32 = 1 << 17
    private static let ecdsa: UInt16 = 0x0018

    /// The TPM's description as the client gives it: `id:` and 8 hex digits, up to 32
    /// printable characters, `id:` and up to 16 hex digits. The CA cannot check these
    /// against the TPM (docs/SECURITY.md, "Proving keys live in the TPM").
    static func description(_ tpm: AttestationExchange.TPM) throws -> TPMDescription {
        func hex(_ text: String, digits: ClosedRange<Int>) -> UInt64? {
            guard text.hasPrefix("id:") else { return nil }
            let value = text.dropFirst(3)
            guard digits.contains(value.count), value.allSatisfy(\.isHexDigit) else { return nil }
            return UInt64(value, radix: 16)
        }
        guard let manufacturer = hex(tpm.manufacturer, digits: 8...8), let version = hex(tpm.version, digits: 1...16),
              (1...32).contains(tpm.model.count), tpm.model.unicodeScalars.allSatisfy({ (0x20...0x7E).contains($0.value) })
        else {
            throw ProviderError.badRequest(.invalidRequest, "tpm must give manufacturer as id:XXXXXXXX, model as 1 to 32 printable characters and version as id: and up to 16 hex digits")
        }
        return TPMDescription(manufacturer: UInt32(manufacturer), model: tpm.model, firmwareVersion: version)
    }
}
