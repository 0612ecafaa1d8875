import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyWebAuthn

/// Issues user certificates (`POST v1/ssh/certificates`; docs/PROTOCOL.md section 12):
/// to the holder of an access token of scope `ssh` (DPoP-bound tokens checked as at
/// `/userinfo`), for an SSH key whose private half signed the request, naming the
/// identity's username and the principals an admin granted it, or, for a client's own
/// token (client credentials), only the principals an admin granted the client.
/// Everything that can be checked without the store is checked first (the proof, and a
/// TPM attestation of the key when one is sent or demanded); then one transaction checks
/// the token, the credential or client, the principals, the key's holder and the proof's
/// single use, records the certificate and its audit event, and the certificate is
/// signed only once that transaction has committed.
struct SSHCertificateIssuance: Sendable {
    let context: ProviderContext
    let tokens: TokenEndpoint
    let principals: SSHPrincipalGrants

    /// The shortest lifetime a request may ask for.
    static let minimumLifetime = 60
    /// How far back `valid_after` is set, for hosts whose clocks run a little behind.
    static let backdating: TimeInterval = 60
    /// ``Identity/columns`` of the `identities` table joined as `i`.
    static let identityColumns = Identity.columns.split(separator: ",").map { "i." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")

    func issue(
        _ request: SSHCertificateExchange.Request, presentation: TokenEndpoint.Presentation, now: Date = ProviderClock.now
    ) async throws -> SSHCertificateExchange.Issued {
        try await SSHAuthority(context: context).ready()
        let key = try SSHAuthority.publicKey(request.publicKey, "the public key")
        let cap = min(context.configuration.sshCertificateLifetime, ProviderConfiguration.maximumSSHCertificateLifetime)
        let lifetime = request.lifetime.map(TimeInterval.init) ?? cap
        guard lifetime >= TimeInterval(Self.minimumLifetime), lifetime <= cap else {
            throw ProviderError.badRequest(.invalidRequest, "lifetime: \(Self.minimumLifetime) to \(Int(cap)) seconds")
        }
        if let asked = request.principals {
            guard !asked.isEmpty, asked.count <= SSHPrincipalGrants.maximumPerIdentity, asked.allSatisfy(SSHCertificate.isAcceptablePrincipal) else {
                throw ProviderError.badRequest(.invalidRequest, "principals: 1 to \(SSHPrincipalGrants.maximumPerIdentity) names without commas, spaces or control characters")
            }
        }
        let (proof, message) = try verifiedProof(request, key: key, accessToken: presentation.token, now: now)
        let attestation = try await verifiedAttestation(request.attestation, of: key, over: message, now: now)

        let url = context.url(ProtocolPath.sshCertificates)
        let serial = UInt64.random(in: 1...UInt64(Int64.max))
        let validAfter = now.addingTimeInterval(-Self.backdating)
        let validBefore = now.addingTimeInterval(lifetime)
        let (holder, granted, caKey) = try await context.database.transaction { transaction in
            let token = try await self.tokens.resourceHolder(presentation, method: HTTPMethod.post, url: url, acceptingClients: true, now: now, in: transaction)
            guard token.scope.split(separator: " ").contains(Substring(SSHCertificateExchange.scope)) else {
                throw ProviderError.insufficientScope(SSHCertificateExchange.scope)
            }
            let holder = try await self.holder(of: token, in: transaction)
            let allowed = try await self.principals.principals(of: holder, in: transaction)
            var granted: [String] = []
            for principal in request.principals ?? allowed where !granted.contains(principal) { granted.append(principal) }
            guard !granted.isEmpty, granted.allSatisfy(allowed.contains) else {
                let whom = holder.identityID == nil ? "client" : "identity"
                throw ProviderError(.forbidden, code: .principalNotGranted, reason: allowed.isEmpty
                    ? "no SSH principal is granted to this \(whom) (latchkey admin set-ssh-principals)"
                    : "a principal asked for is not granted to this \(whom)")
            }
            guard try await SpentTickets.spend(proof, until: now.addingTimeInterval(2 * SSHCertificateExchange.proofWindow), in: transaction) else {
                throw ProviderError.badRequest(.invalidSSHProof, "this proof was used before; make a new one")
            }
            try await self.claim(key, for: holder, now: now, in: transaction)
            let clientID = token.clientID
            // The key that signs now, recorded with the certificate for the KRL's sections.
            let caKey = try await SSHAuthorityKeyRing.currentName(in: transaction)
            try await transaction.execute("""
                INSERT INTO ssh_certificates (serial, identity_id, credential_id, client_id, client_registration, key_fingerprint, principals, valid_after, valid_before, issued_at, ca_key)
                VALUES (\(Int64(bitPattern: serial)), \(holder.identityID), \(holder.credentialID), \(clientID), \(holder.clientRegistration),
                    \(key.fingerprint), \(granted.joined(separator: ",")), \(validAfter), \(validBefore), \(now), \(caKey))
                """)
            try await self.context.audit.record(AuditEntry(
                .sshCertificateIssued, actor: holder.actor, subject: holder.identityID, client: clientID,
                details: AuditEvent.Details(
                    credential: holder.credentialID.map { String(Base64URL.encode($0).prefix(AuditEntry.maximumCredentialLength)) }, serial: String(serial),
                    fingerprint: key.fingerprint, principals: granted, validAfter: AuditEvent.formatTime(validAfter),
                    validBefore: AuditEvent.formatTime(validBefore), attestation: attestation?.rawValue
                ), now: now
            ), in: transaction)
            return (holder, granted, caKey)
        }
        let authority = try await context.sshKeys.signingKey(named: caKey)
        let keyID = holder.keyID(serial: serial) + (attestation.map { " attested=\($0.rawValue)" } ?? "")
        var critical: [SSHCertificate.Option] = []
        if let command = context.configuration.sshForceCommand { critical.append(.init("force-command", command)) }
        if let addresses = context.configuration.sshSourceAddress { critical.append(.init("source-address", addresses)) }
        let certificate = try SSHCertificate.issue(
            for: key, serial: serial, kind: .user, keyID: keyID, principals: granted,
            validAfter: UInt64(validAfter.timeIntervalSince1970), validBefore: UInt64(validBefore.timeIntervalSince1970),
            criticalOptions: critical, extensions: SSHCertificate.standardUserExtensions, by: authority
        )
        context.metrics.sshCertificateIssued()
        return SSHCertificateExchange.Issued(
            certificate: certificate.openSSHLine(comment: holder.lineComment),
            serial: String(serial), keyID: keyID, principals: granted,
            validAfter: AuditEvent.formatTime(Date(timeIntervalSince1970: TimeInterval(certificate.validAfter))),
            validBefore: AuditEvent.formatTime(Date(timeIntervalSince1970: TimeInterval(certificate.validBefore)))
        )
    }

    /// Checks the proof's time, nonce and signature by `key` over the request; answers
    /// the id its single use is recorded under, and the message the key signed.
    private func verifiedProof(_ request: SSHCertificateExchange.Request, key: SSHPublicKey, accessToken: String, now: Date) throws -> (String, Data) {
        let proof = request.proof
        guard abs(TimeInterval(proof.time) - now.timeIntervalSince1970) <= SSHCertificateExchange.proofWindow else {
            throw ProviderError.badRequest(.invalidSSHProof, "the proof's time is more than \(Int(SSHCertificateExchange.proofWindow)) seconds from the provider's clock")
        }
        guard proof.nonce.utf8.count <= 128, let nonce = try? Base64URL.decode(proof.nonce), (16...64).contains(nonce.count),
              proof.signature.utf8.count <= 512, let blob = try? Base64URL.decode(proof.signature),
              let signature = try? SSHSignature(wireBlob: blob)
        else { throw ProviderError.badRequest(.invalidSSHProof, "the proof's nonce (16 to 64 bytes) or signature is malformed") }
        let message = try SSHCertificateExchange.signedMessage(
            issuer: context.issuer.absoluteString, accessToken: accessToken, publicKey: key, principals: request.principals,
            lifetime: request.lifetime, time: proof.time, nonce: nonce
        )
        guard signature.isValid(for: message, by: key) else {
            throw ProviderError.badRequest(.invalidSSHProof, "the proof is not a signature by this key over this request and token")
        }
        return ("ssh-proof|" + key.fingerprint + "|" + Base64URL.encode(nonce), message)
    }

    /// The TPM's word that `key` is one of its own (docs/PROTOCOL.md section 12, "Attested
    /// keys"): the `tpm` statement checks of WebAuthn L3 §8.3.2 with the proof's `message`
    /// in place of authenticatorData ‖ clientDataHash, so a statement serves one request
    /// only, and an AIK certificate chained to the provider's attestation roots. Answers
    /// the attestation the certificate records; refuses a missing one under
    /// `--ssh-require-attestation` and any that does not verify, required or not.
    private func verifiedAttestation(
        _ attestation: SSHCertificateExchange.KeyAttestation?, of key: SSHPublicKey, over message: Data, now: Date
    ) async throws -> AttestationRequirement? {
        guard let attestation else {
            guard context.configuration.sshRequiredAttestation == nil else {
                throw ProviderError.badRequest(.attestationRequired, """
                    this provider certifies only SSH keys proved to live in a TPM: \
                    latchkey ssh login --key-protection tpm --attest
                    """)
            }
            return nil
        }
        func refuse(_ why: String, _ underlying: (any Error)? = nil) -> ProviderError {
            ProviderError.badRequest(.invalidSSHProof, "the key's attestation: " + why, underlying: underlying)
        }
        guard attestation.format == SSHCertificateExchange.KeyAttestation.tpm else { throw refuse("format must be \"tpm\"") }
        guard key.algorithm == .ecdsaP256 else { throw refuse("a TPM holds P-256 keys; this is \(key.algorithm.rawValue)") }
        guard (1...4).contains(attestation.x5c.count), attestation.x5c.allSatisfy({ $0.utf8.count <= 22 * 1024 }),
              attestation.certInfo.utf8.count <= 1024, attestation.sig.utf8.count <= 256, attestation.pubArea.utf8.count <= 1024,
              let certInfo = try? Base64URL.decode(attestation.certInfo), let signature = try? Base64URL.decode(attestation.sig),
              let pubArea = try? Base64URL.decode(attestation.pubArea)
        else { throw refuse("x5c (1 to 4 certificates), certInfo, sig and pubArea must be base64url of their bounded sizes") }
        do {
            let certificates = try attestation.x5c.map { try X509Certificate(derEncoded: try Base64URL.decode($0)) }
            let statement = try TPMAttestationStatement(certificates: certificates, signature: signature, certInfo: certInfo, pubArea: pubArea)
            try statement.verify(certifying: key.verifyingKey, toBeSigned: message, aaguid: nil, roots: try await context.attestationRoots(), at: now)
        } catch let error as WebAuthnError {
            throw refuse(error.reason, error)
        } catch let error as ProviderError {
            throw error
        } catch {
            throw refuse("a certificate in x5c does not parse", error)
        }
        return .tpm
    }

    /// Who holds a token of scope `ssh`: a person whose credential is still live (one
    /// statement), or a client for itself, with its registration.
    private func holder(of token: GrantLedger.TokenHolder, in transaction: any SQLTransaction) async throws -> SSHCertificateHolder {
        switch token {
        case .person(let grant):
            guard let row = try await transaction.first("""
                SELECT \(raw: Self.identityColumns), c.revoked_at AS credential_revoked_at
                FROM credentials c JOIN identities i ON i.id = c.identity_id
                WHERE c.id = \(grant.credentialID) AND i.id = \(grant.identityID)
                """), try row.decode("credential_revoked_at", as: Date?.self) == nil
            else { throw ProviderError.unauthorized }
            return .identity(try Identity(row: row), credentialID: grant.credentialID)
        case .client(let grant):
            // A configured client has no row (and no granted principals); a deleted one
            // has no tokens left either.
            let row = try await transaction.first("SELECT registration FROM clients WHERE id = \(grant.clientID)")
            return .client(id: grant.clientID, registration: try row?.decode("registration", as: String?.self))
        }
    }

    /// The first holder a key is certified for keeps it: the same key for any other
    /// identity or client is refused, so one's key cannot be made to stand for another's.
    private func claim(_ key: SSHPublicKey, for holder: SSHCertificateHolder, now: Date, in transaction: any SQLTransaction) async throws {
        let (identityID, clientID): (String?, String?) = switch holder {
        case .identity(let identity, _): (identity.id, nil)
        case .client(let id, _): (nil, id)
        }
        // One statement: the new holder, or (a no-op update) the one already there.
        let row = try await transaction.first("""
            INSERT INTO ssh_key_holders (key_fingerprint, identity_id, client_id, first_certified_at)
            VALUES (\(key.fingerprint), \(identityID), \(clientID), \(now))
            ON CONFLICT (key_fingerprint) DO UPDATE SET key_fingerprint = excluded.key_fingerprint RETURNING identity_id, client_id
            """)
        guard let row, try row.decode("identity_id", as: String?.self) == identityID, try row.decode("client_id", as: String?.self) == clientID else {
            throw ProviderError(.conflict, code: .invalidSSHKey, reason: "this key is certified for another identity or client; make a key of your own")
        }
    }
}
