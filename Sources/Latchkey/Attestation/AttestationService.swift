#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import LatchkeyProtocol
import LatchkeyWebAuthn
import Logging

/// TPM attestation of new credentials (``Configuration/attestation``; docs/SECURITY.md,
/// "Proving keys live in the TPM"): the attestation key (AK) kept in the vault, and the
/// exchange with an attestation CA that certifies it (docs/PROTOCOL.md section 10).
struct AttestationService: EmbeddedService {
    let core: EmbeddedCore
}

extension AttestationService {
    /// What the credential being created at `provider` is attested with: nil without
    /// attestation; else the AK and AIK certificate kept for the configured CA, made and
    /// certified first if this vault has none for it on this TPM. `protection` is where
    /// the new key goes: attestation vouches only for TPM keys.
    func attestationSigner(bindingAt provider: ProviderAddress, protection: KeyProtection, flow: FlowContext) async throws -> TPMAttestationSigner? {
        guard case .tpm(let configured) = configuration.attestation else { return nil }
        guard protection == .tpm else {
            throw LatchkeyError.attestationFailed(reason: "TPM attestation vouches only for keys made in the TPM, and this key would be kept in software; ask for TPM key protection (--key-protection tpm)"
            )
        }
        let authority = try configured.map(ProviderAddress.init) ?? provider
        try allowedDomains.check(authority)
        // TPM commands, each on a thread of its own (``BlockingWork``).
        if let kept = try await BlockingWork.run({ try self.keptAttestationSigner(authority, flow: flow) }) { return kept }
        return try await certifyNewAttestationKey(at: authority, flow: flow)
    }

    /// The newest AK record for `authority` whose certificates still hold for a day and
    /// whose key this TPM can load. Records of another TPM, or expired ones, are left in
    /// the vault (nothing is deleted behind the user's back) and passed over.
    private func keptAttestationSigner(_ authority: ProviderAddress, flow: FlowContext) throws -> TPMAttestationSigner? {
        let vault = authenticator.vault
        let records = try vault.entries().reversed().compactMap { entry -> (VaultEntry, [X509Certificate])? in
            guard entry.protection == .tpm, let record = AttestationKeyRecord.decode(entry.metadata), record.authority == authority.issuer,
                  let certificates = record.parsedCertificates, let aik = certificates.first, let root = certificates.last,
                  aik.chains(to: [root], through: Array(certificates.dropFirst().dropLast()), at: Date().addingTimeInterval(86400))
            else { return nil }
            return (entry, certificates)
        }
        for (entry, certificates) in records {
            let key = try vault.tpmKey(entry.handle)
            do {
                try key.checkUsable()
            } catch let error as CryptoError where error.code == .tpmKeyUnusable {
                flow.logger.debug("attestation key of another TPM passed over", metadata: ["handle": .string(entry.handle.rawValue)])
                continue
            } catch let error as CryptoError {
                throw Self.tpmError(error, "could not load the kept attestation key")
            }
            flow.logger.debug("attestation key kept", metadata: ["authority": .string(authority.issuer)])
            return TPMAttestationSigner(attestationKey: try TPMAttestationKey(key), certificates: Array(certificates.dropLast()))
        }
        return nil
    }

    /// Makes an AK in the TPM, has the CA at `authority` certify it after credential
    /// activation (the TPM recovers the CA's secret, which only the TPM holding both the
    /// endorsement key the CA checked and this AK can), and keeps both in the vault.
    private func certifyNewAttestationKey(at authority: ProviderAddress, flow: FlowContext) async throws -> TPMAttestationSigner {
        let (tpm, attestationKey, request) = try await BlockingWork.run { () throws -> (TPM, TPMAttestationKey, AttestationExchange.ActivationRequest) in
            do {
                let tpm = try TPM.system()
                let attestationKey = try tpm.createAttestationKey()
                let description = try tpm.describe()
                let endorsement: X509Certificate
                do {
                    endorsement = try tpm.endorsementCertificate()
                } catch let error as CryptoError where error.code == .tpmCommandRefused {
                    throw LatchkeyError.attestationFailed(reason: "this TPM has no usable RSA endorsement key certificate (NV index 0x01C00002), which an attestation CA needs: \(error.reason)",
                        underlying: error
                    )
                }
                let request = AttestationExchange.ActivationRequest(
                    endorsementCertificate: Base64URL.encode(endorsement.derEncoded), attestationKey: Base64URL.encode(attestationKey.publicArea),
                    tpm: .init(manufacturer: description.manufacturerID, model: description.model, version: description.versionID)
                )
                return (tpm, attestationKey, request)
            } catch let error as CryptoError {
                throw Self.tpmError(error, "could not make an attestation key")
            }
        }
        let conversation = ProviderConversation(flow: flow, provider: authority, transport: transport)
        let activation = try await conversation.post(authority.url(ProtocolPath.attestationActivations), request)
            .decode(AttestationExchange.Activation.self, "credential activation")
        let challenge = TPMCredentialProtection.Challenge(
            credentialBlob: try Self.decoded(activation.credentialBlob, "credential_blob"),
            encryptedSecret: try Self.decoded(activation.encryptedSecret, "encrypted_secret")
        )
        let secret = try await BlockingWork.run {
            do {
                return try tpm.activateCredential(attestationKey, challenge: challenge)
            } catch let error as CryptoError {
                throw Self.tpmError(error, "could not recover the attestation CA's secret (was it made for this TPM's endorsement key?)")
            }
        }
        let issued = try await conversation.post(
            authority.url(ProtocolPath.attestationCertificates),
            AttestationExchange.CertificateRequest(activation: try ProviderConversation.bounded(activation.activation, "activation", maximumLength: 4096), credential: Base64URL.encode(secret))
        ).decode(AttestationExchange.Certificate.self, "AIK certificate")
        let area = try TPMTPublic(attestationKey.publicArea)
        let publicKey = try VerifyingKey(p256X: area.x, y: area.y)
        let certificates = try Self.issuedCertificates(issued, for: publicKey)
        let kept = try TPMSigningKey(wrappedKey: attestationKey.wrappedKey, publicKey: publicKey, in: tpm)
        do {
            _ = try authenticator.vault.storeKey(kept, metadata: AttestationKeyRecord(authority: authority.issuer, certificates: certificates).encoded())
        } catch let error as KeyVaultError {
            throw LatchkeyError(error)
        }
        flow.logger.debug("attestation key certified", metadata: ["authority": .string(authority.issuer)])
        return TPMAttestationSigner(attestationKey: attestationKey, certificates: Array(certificates.dropLast()))
    }

    /// The CA's answer, checked: an AIK certificate for this AK that chains to the root the
    /// CA sent last. The relying party checks the chain against roots of its own; this
    /// catches a CA answering for another key before anything is kept.
    private static func issuedCertificates(_ issued: AttestationExchange.Certificate, for attestationKey: VerifyingKey) throws -> [X509Certificate] {
        guard (1...AttestationKeyRecord.maximumCertificates - 1).contains(issued.chain.count) else {
            throw LatchkeyError.malformedResponse(reason: "the attestation CA sent \(issued.chain.count) chain certificates; 1 to \(AttestationKeyRecord.maximumCertificates - 1) expected")
        }
        let certificates: [X509Certificate]
        do {
            certificates = try ([issued.certificate] + issued.chain).map {
                try X509Certificate(derEncoded: Base64URL.decode(ProviderConversation.bounded($0, "certificate", maximumLength: 16 * 1024)))
            }
        } catch let error as LatchkeyError {
            throw error
        } catch {
            throw LatchkeyError.malformedResponse(reason: "the attestation CA's certificates do not parse", underlying: error)
        }
        guard let aik = certificates.first, let root = certificates.last, (try? aik.publicKey) == attestationKey,
              aik.chains(to: [root], through: Array(certificates.dropFirst().dropLast()))
        else {
            throw LatchkeyError.attestationFailed(reason: "the attestation CA's certificate is not for this attestation key, or does not chain to the root it sent")
        }
        return certificates
    }

    /// A byte string of the CA's answer: base64url of at most 1024 characters.
    private static func decoded(_ text: String, _ name: String) throws -> Data {
        do {
            return try Base64URL.decode(ProviderConversation.bounded(text, name, maximumLength: 1024))
        } catch let error as LatchkeyError {
            throw error
        } catch {
            throw LatchkeyError.malformedResponse(reason: "the attestation CA's \"\(name)\" is not base64url", underlying: error)
        }
    }

    /// A TPM failure during attestation: an unreachable TPM as such, anything else as an
    /// attestation failure.
    static func tpmError(_ error: CryptoError, _ doing: String) -> LatchkeyError {
        error.code == .tpmUnavailable
            ? LatchkeyError.tpmUnavailable(reason: error.reason + "; point TPM2OPENSSL_TCTI at the TPM (default device:/dev/tpmrm0)", underlying: error)
            : LatchkeyError.attestationFailed(reason: "the TPM \(doing): \(error.reason)", underlying: error)
    }
}
