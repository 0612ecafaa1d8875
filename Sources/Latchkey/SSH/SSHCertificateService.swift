#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyWebAuthn
import Logging

/// `latchkey ssh login` (docs/PROTOCOL.md section 12): an SSH key in the vault, made the
/// first time for each provider (Ed25519 in software, P-256 in the TPM), a sign-in's
/// tokens with the `ssh` scope (kept ones when they do), a proof by the key over the
/// request, and the certificate the provider's CA answers, checked and kept beside the key.
struct SSHCertificateService: EmbeddedService {
    let core: EmbeddedCore
}

extension SSHCertificateService {
    /// Whose tokens a certificate is asked with.
    enum TokenSource: Sendable {
        /// A person's: kept tokens or a sign-in, through `clientID`.
        case signIn(clientID: String, redirectURI: URL)
        /// The client's own (RFC 6749 §4.4), with its client key in the vault.
        case clientCredentials(clientID: String)

        /// The client whose SSH key a client credentials login uses; nil for a person.
        var keyClientID: String? {
            if case .clientCredentials(let clientID) = self { return clientID }
            return nil
        }
    }

    /// The work of `Embedded.sshLogin`, which documents it.
    func login(issuer: URL, source: TokenSource, principals: [String]?, lifetime: Int?) async throws -> SSHLogin {
        let flow = flow("sshLogin")
        return try await flow.run {
            let address = try sessions.provider(issuer)
            let vault = authenticator.vault
            // One key per provider for the person, one per provider and client for a
            // client: a key is certified for one holder only.
            let entry = try await vault.withExclusiveAccess("ssh-keys") { () throws -> VaultEntry in
                if let existing = try sshRecords().first(where: { $0.record.issuer == address.issuer && $0.record.clientID == source.keyClientID })?.entry {
                    return existing
                }
                let protection = credentialStore.keyProtectionForNewCredentials().protection
                let record = SSHKeyRecord(issuer: address.issuer, clientID: source.keyClientID)
                return try vault.createKey(protection == .tpm ? .es256 : .ed25519, metadata: record.encoded(), protection: protection)
            }
            let key = try SSHPublicKey(entry.publicKey)
            // Kept tokens the provider no longer takes (revoked there) are refreshed, or
            // replaced by a sign-in, once.
            func attempt(rejecting rejected: Tokens?) async throws -> (Tokens, TransportResponse) {
                let tokens = switch source {
                case .signIn(let clientID, let redirectURI):
                    try await tokenCache.validTokens(
                        issuer: issuer, clientID: clientID, redirectURI: redirectURI, scopes: [OAuthScope.openID, SSHCertificateExchange.scope],
                        credential: nil, proofOfPossession: nil, minimumValidity: 30, rejected: rejected
                    )
                case .clientCredentials(let clientID):
                    try await clientKeys.clientCredentials(issuer: issuer, clientID: clientID, scopes: [SSHCertificateExchange.scope], dpop: true, rejected: rejected)
                }
                return (tokens, try await requestCertificate(
                    address: address, key: key, entry: entry, tokens: tokens, principals: principals, lifetime: lifetime, flow: flow
                ))
            }
            var (tokens, response) = try await attempt(rejecting: nil)
            if response.status == 401 { (tokens, response) = try await attempt(rejecting: tokens) }
            guard response.status == 201 else {
                throw ProviderConversation.providerError(status: response.status, answer: try? JSONDecoder().decode(ErrorResponse.self, from: response.body))
            }
            guard response.body.count <= 64 * 1024, let issued = try? JSONDecoder().decode(SSHCertificateExchange.Issued.self, from: response.body),
                  let certificate = try? SSHCertificate(openSSHLine: issued.certificate)
            else { throw LatchkeyError.malformedResponse(reason: "the provider's SSH certificate does not parse") }
            // What the provider says must be what was asked: this key, a user certificate,
            // signed by the key it names.
            guard certificate.publicKey == key, certificate.kind == .user, certificate.isSignatureValid,
                  principals.map({ Set($0) == Set(certificate.principals) }) ?? !certificate.principals.isEmpty
            else { throw LatchkeyError.malformedResponse(reason: "the provider's SSH certificate is not for this key and these principals") }
            try vault.updateMetadata(entry.handle) { data in
                guard var record = SSHKeyRecord.decode(data) else { throw LatchkeyError.vault(reason: "the SSH key record is unreadable") }
                record.certificate = certificate.openSSHLine(comment: "latchkey")
                data = try record.encoded()
            }
            flow.logger.info("SSH certificate received", metadata: ["provider": .string(address.issuer), "certificateSerial": .stringConvertible(certificate.serial)])
            return SSHLogin(
                handle: entry.handle, publicKey: key.openSSHLine(comment: "latchkey"), certificate: certificate.openSSHLine(comment: "latchkey"),
                serial: String(certificate.serial), keyID: certificate.keyID, principals: certificate.principals,
                validBefore: Date(timeIntervalSince1970: TimeInterval(certificate.validBefore)), keyProtection: entry.protection
            )
        }
    }

    /// The work of `Embedded.sshKeys`, which documents it.
    func listing() throws -> [SSHKeyListing] {
        do {
            return try sshRecords().map { entry, record in
                let key = try SSHPublicKey(entry.publicKey)
                let certificate = record.certificate.flatMap { try? SSHCertificate(openSSHLine: $0) }
                return SSHKeyListing(
                    handle: entry.handle, issuer: record.issuer, clientID: record.clientID, publicKey: key.openSSHLine(comment: "latchkey"), certificate: record.certificate,
                    serial: certificate.map { String($0.serial) }, principals: certificate?.principals ?? [],
                    validBefore: certificate.map { Date(timeIntervalSince1970: TimeInterval($0.validBefore)) }, keyProtection: entry.protection
                )
            }
        } catch {
            throw LatchkeyError.wrapping(error)
        }
    }

    /// `POST v1/ssh/certificates` for `key` with `tokens`, its proof signed by the vault key
    /// and, with TPM attestation configured, the TPM's certification of the key over it.
    private func requestCertificate(
        address: ProviderAddress, key: SSHPublicKey, entry: VaultEntry, tokens: Tokens, principals: [String]?, lifetime: Int?, flow: FlowContext
    ) async throws -> TransportResponse {
        let nonce = try SecureRandom.bytes(count: 32)
        let time = Int64(Date().timeIntervalSince1970)
        let message = try SSHCertificateExchange.signedMessage(
            issuer: address.issuer, accessToken: tokens.accessToken, publicKey: key, principals: principals, lifetime: lifetime, time: time, nonce: nonce
        )
        let signature = try SSHSignature(algorithm: key.algorithm, signature: try authenticator.vault.sign(message, with: entry.handle))
        let request = SSHCertificateExchange.Request(
            publicKey: key.openSSHLine(), principals: principals, lifetime: lifetime,
            proof: .init(time: time, nonce: Base64URL.encode(nonce), signature: Base64URL.encode(signature.wireBlob)),
            attestation: try await attestation(of: entry, over: message, at: address, flow: flow)
        )
        return try await dpopKeys.transport(for: tokens).send(TransportRequest(
            method: HTTPMethod.post, url: address.base.appendingPathComponent(ProtocolPath.sshCertificates),
            headers: ["Content-Type": ProtocolPath.jsonMediaType, "Accept": ProtocolPath.jsonMediaType], body: try JSONEncoder().encode(request)
        ))
    }

    /// With ``Configuration/attestation`` `tpm`: TPM2_Certify of the SSH key by the vault's
    /// attestation key (made and certified the first time, as for credentials), over
    /// SHA-256 of the proof's `message`, so the statement serves this request only
    /// (docs/PROTOCOL.md section 12, "Attested keys"). Nil without attestation.
    private func attestation(of entry: VaultEntry, over message: Data, at address: ProviderAddress, flow: FlowContext) async throws -> SSHCertificateExchange.KeyAttestation? {
        guard let signer = try await attestations.attestationSigner(bindingAt: address, protection: entry.protection, flow: flow) else { return nil }
        let vault = authenticator.vault
        let certification = try await BlockingWork.run { () throws -> TPMCertification in
            do {
                let key = try vault.tpmKey(entry.handle)
                return try TPM.system().certify(key, with: signer.attestationKey, qualifyingData: try DigestAlgorithm.sha256.hash(message))
            } catch let error as CryptoError {
                throw AttestationService.tpmError(error, "did not certify the SSH key")
            }
        }
        return SSHCertificateExchange.KeyAttestation(
            x5c: signer.certificates.map { Base64URL.encode($0.derEncoded) }, certInfo: Base64URL.encode(certification.certInfo),
            sig: Base64URL.encode(certification.signature), pubArea: Base64URL.encode(certification.publicArea)
        )
    }

    /// The vault's SSH keys and their certificates.
    func sshRecords() throws -> [(entry: VaultEntry, record: SSHKeyRecord)] {
        try authenticator.vault.entries().compactMap { entry in
            SSHKeyRecord.decode(entry.metadata).map { (entry, $0) }
        }
    }
}
