#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto

/// A WebAuthn authenticator in software, with its keys in a `KeyVault` (this process's, or
/// one a key agent holds: any `KeyStore`).
///
/// It plays both the client and the authenticator of WebAuthn for a program that has no
/// browser: it checks the origin and RP ID itself, builds client data, and signs. Its
/// credentials are device-bound (flags UP and UV set, BE and BS clear), each with a
/// signature counter bumped in the vault, under the vault's lock, before every assertion.
public struct SoftwareAuthenticator: Sendable {
    public let vault: any KeyStore
    /// The AAGUID reported in attested credential data without TPM attestation: all zero,
    /// as for `none` attestation (§6.5.1), since nothing then vouches for a model.
    /// Attested TPM credentials report ``TPMAttestationSigner/aaguid``.
    public let aaguid = Data(count: 16)
    /// Length of new credential IDs: 32 random bytes (within §5.8.3's 16-64 guidance).
    public static let credentialIDLength = 32

    public init(vault: any KeyStore) {
        self.vault = vault
    }

    /// A credential in the vault.
    public struct Credential: Hashable, Sendable {
        public var handle: KeyHandle
        public var metadata: CredentialMetadata
        public var algorithm: SigningAlgorithm
        /// Where its private key lives (in the vault file, or in the TPM).
        public var protection: KeyProtection
    }

    /// Every WebAuthn credential in the vault, optionally only those for `rpID`. Records
    /// that cannot be read are left out; ``scanCredentials()`` reports them.
    public func credentials(rpID: String? = nil) throws -> [Credential] {
        Self.credentials(in: try vault.entries(), rpID: rpID)
    }

    /// The WebAuthn credentials among `entries` (of one listing of the vault, which a
    /// caller reads once for several purposes), for `rpID` or all.
    public static func credentials(in entries: [VaultEntry], rpID: String? = nil) -> [Credential] {
        entries.compactMap { credential($0, rpID: rpID) }
    }

    /// Every WebAuthn credential in the vault, and one error per record that cannot be
    /// read or authenticated (damaged, truncated, swapped), naming its handle.
    public func scanCredentials() throws -> (credentials: [Credential], damaged: [KeyVaultError]) {
        let scan = try vault.scan()
        return (scan.entries.compactMap { Self.credential($0, rpID: nil) }, scan.problems)
    }

    private static func credential(_ entry: VaultEntry, rpID: String?) -> Credential? {
        guard let metadata = CredentialMetadata.decode(entry.metadata), rpID == nil || metadata.rpID == rpID?.lowercased() else {
            return nil
        }
        return Credential(handle: entry.handle, metadata: metadata, algorithm: entry.algorithm, protection: entry.protection)
    }

    /// Changes a credential's ``CredentialMetadata/attributes`` (the layers above keep
    /// the provider, the credential's state and the like there), under the vault's lock.
    public func updateAttributes(of handle: KeyHandle, _ update: (inout [String: String]) -> Void) throws -> Credential {
        var updated: CredentialMetadata?
        let entry: VaultEntry
        do {
            entry = try vault.updateMetadata(handle) { data in
                guard var metadata = CredentialMetadata.decode(data) else {
                    throw WebAuthnError.vault(reason: "credential metadata is unreadable")
                }
                update(&metadata.attributes)
                updated = metadata
                data = try metadata.encoded()
            }
        } catch let error as KeyVaultError {
            throw WebAuthnError.vault(reason: error.reason, underlying: error)
        }
        guard let updated else { throw WebAuthnError.vault(reason: "credential metadata is unreadable") }
        return Credential(handle: handle, metadata: updated, algorithm: entry.algorithm, protection: entry.protection)
    }

    /// Deletes a credential's key from the vault. The relying party is not told: a
    /// deleted credential simply never signs again. Returns false when there was no such
    /// key (another process may have deleted it first).
    @discardableResult
    public func deleteCredential(_ handle: KeyHandle) throws -> Bool {
        do {
            try vault.deleteKey(handle)
            return true
        } catch let error as KeyVaultError where error.code == .keyNotFound {
            return false
        } catch let error as KeyVaultError {
            throw WebAuthnError.vault(reason: error.reason, underlying: error)
        }
    }

    // MARK: Registration

    /// Creates a credential for `options` on behalf of `origin` (§5.1.3 client steps and
    /// the authenticatorMakeCredential operation, §6.3.2), its key kept as `protection`
    /// says. A TPM key is ES256 only: with ``KeyProtection/tpm`` the first ES256 entry of
    /// `pubKeyCredParams` is taken, and options that offer no ES256 are refused.
    ///
    /// With `attestation`, the new key (which must be a TPM key) is registered with a `tpm`
    /// statement by that attestation key and the ``TPMAttestationSigner/aaguid``, whatever
    /// the options' `attestation` conveyance says; without it, `direct` or `enterprise`
    /// get `packed` self attestation and anything else `none`. A key whose attestation
    /// fails is deleted again.
    public func makeCredential(
        _ options: PublicKeyCredentialCreationOptionsJSON,
        origin: String,
        attributes: [String: String] = [:],
        protection: KeyProtection = .software,
        attestation signer: TPMAttestationSigner? = nil
    ) throws -> (response: RegistrationResponseJSON, credential: Credential) {
        guard signer == nil || protection == .tpm else {
            throw WebAuthnError.attestationFailed(reason: "tpm attestation vouches only for keys made in the TPM; this key would be kept in software")
        }
        let host = try RelyingPartyIdentifier.host(ofOrigin: origin)
        let rpID = (options.rp.id ?? host).lowercased()
        try RelyingPartyIdentifier.validate(rpID: rpID, forHost: host)
        let offered = options.pubKeyCredParams.lazy
            .filter({ $0.type == "public-key" })
            .compactMap({ SigningAlgorithm(coseIdentifier: $0.alg) })
        guard let algorithm = protection == .tpm ? offered.first(where: { $0 == .es256 }) : offered.first else {
            throw WebAuthnError.unsupportedAlgorithm(reason: protection == .tpm
                    ? "the relying party does not accept ES256, the only algorithm a TPM key has (no Ed25519 in a TPM)"
                    : "none of the requested algorithms is ES256 or EdDSA"
            )
        }
        let excluded = Set((options.excludeCredentials ?? []).map(\.id.data))
        if !excluded.isEmpty, try credentials(rpID: rpID).contains(where: { excluded.contains($0.metadata.credentialID.data) }) {
            throw WebAuthnError.excludedCredentialExists(reason: "this device already holds a credential the relying party excluded")
        }
        guard options.user.id.data.count <= 64 else {
            throw WebAuthnError.malformedJSON(reason: "user.id over 64 bytes (§5.4.3)")
        }

        let credentialID = try SecureRandom.bytes(count: Self.credentialIDLength)
        var metadata = CredentialMetadata(
            credentialID: credentialID, rpID: rpID, userHandle: options.user.id.data,
            userName: options.user.name, userDisplayName: options.user.displayName, createdAt: Date()
        )
        metadata.attributes = attributes
        let entry: VaultEntry
        do {
            entry = try vault.createKey(algorithm, metadata: metadata.encoded(), protection: protection)
        } catch let error as KeyVaultError {
            throw WebAuthnError.vault(reason: error.reason, underlying: error)
        }

        let authenticatorData = try AuthenticatorData(
            rpIDHash: DigestAlgorithm.sha256.hash(Data(rpID.utf8)),
            flags: [.userPresent, .userVerified],
            signCount: 0,
            attestedCredentialData: .init(
                aaguid: signer == nil ? aaguid : TPMAttestationSigner.aaguid, credentialID: credentialID, credentialPublicKey: COSEKey(entry.publicKey)
            )
        )
        let clientDataJSON = CollectedClientData(type: CollectedClientData.createType, challenge: options.challenge.data, origin: origin).serialized()
        let attestation: AttestationObject
        if let signer {
            do {
                let key: TPMSigningKey
                do {
                    key = try vault.tpmKey(entry.handle)
                } catch let error as KeyVaultError {
                    throw WebAuthnError.vault(reason: error.reason, underlying: error)
                }
                attestation = try signer.attest(authenticatorData, clientDataHash: DigestAlgorithm.sha256.hash(clientDataJSON), key: key)
            } catch {
                _ = try? deleteCredential(entry.handle)
                throw error
            }
        } else if options.attestation == AttestationConveyancePreference.direct.rawValue || options.attestation == AttestationConveyancePreference.enterprise.rawValue {
            attestation = try .packedSelf(
                authenticatorData,
                clientDataHash: DigestAlgorithm.sha256.hash(clientDataJSON),
                algorithm: algorithm,
                sign: { try vault.sign($0, with: entry.handle) }
            )
        } else {
            attestation = .none(authenticatorData)
        }
        let response = RegistrationResponseJSON(credentialID: credentialID, clientDataJSON: clientDataJSON, attestationObject: attestation)
        return (response, Credential(handle: entry.handle, metadata: metadata, algorithm: algorithm, protection: protection))
    }

    // MARK: Authentication

    /// The credentials that could answer `options` from `origin` (§6.3.3 step 6), so a
    /// caller can ask the user when there are several. `listed`: the credentials of a
    /// listing of the vault the caller already made and decoded (``credentials(in:rpID:)``),
    /// instead of a new one (each counter is read afresh when signing).
    public func candidates(for options: PublicKeyCredentialRequestOptionsJSON, origin: String, among listed: [Credential]? = nil) throws -> [Credential] {
        let (rpID, allows) = try Self.scope(of: options, origin: origin)
        return try (listed ?? Self.credentials(in: vault.entries())).filter { $0.metadata.rpID == rpID && allows($0) }
    }

    /// The RP ID `options` name for `origin`, checked against its host, and which
    /// credentials its `allowCredentials` admit (all when it lists none): §6.3.3 steps 6
    /// and 7, shared by listing candidates and by signing with one already listed.
    private static func scope(
        of options: PublicKeyCredentialRequestOptionsJSON, origin: String
    ) throws -> (rpID: String, allows: (Credential) -> Bool) {
        let host = try RelyingPartyIdentifier.host(ofOrigin: origin)
        let rpID = (options.rpId ?? host).lowercased()
        try RelyingPartyIdentifier.validate(rpID: rpID, forHost: host)
        let allowed = Set((options.allowCredentials ?? []).map(\.id.data))
        return (rpID, { allowed.isEmpty || allowed.contains($0.metadata.credentialID.data) })
    }

    /// Signs an assertion for `options` on behalf of `origin` (§5.1.4 client steps and
    /// authenticatorGetAssertion, §6.3.3). With several candidates, `credentialID` picks one;
    /// without it the error is ``WebAuthnError/Code/credentialChoiceRequired``.
    public func getAssertion(
        _ options: PublicKeyCredentialRequestOptionsJSON,
        origin: String,
        credentialID: Data? = nil
    ) throws -> (response: AuthenticationResponseJSON, credential: Credential) {
        let candidates = try candidates(for: options, origin: origin)
        let chosen: Credential
        if let credentialID {
            guard let match = candidates.first(where: { $0.metadata.credentialID.data == credentialID }) else {
                throw WebAuthnError.noMatchingCredential(reason: "the chosen credential cannot answer this request")
            }
            chosen = match
        } else if candidates.count == 1, let only = candidates.first {
            chosen = only
        } else if candidates.isEmpty {
            throw WebAuthnError.noMatchingCredential(reason: "no credential on this device for \(options.rpId ?? origin)")
        } else {
            throw WebAuthnError.credentialChoiceRequired(reason: "\(candidates.count) credentials fit; choose one")
        }
        return try sign(options, origin: origin, with: chosen)
    }

    /// Signs an assertion for `options` on behalf of `origin` with `credential`, one of
    /// ``candidates(for:origin:)`` for the same options and origin, without listing the
    /// vault again (through an agent, a listing is a round trip). The credential is checked
    /// to fit as ``candidates(for:origin:)`` checks (§6.3.3 steps 6 and 7); its counter is
    /// read afresh.
    public func getAssertion(
        _ options: PublicKeyCredentialRequestOptionsJSON,
        origin: String,
        using credential: Credential
    ) throws -> (response: AuthenticationResponseJSON, credential: Credential) {
        let (rpID, allows) = try Self.scope(of: options, origin: origin)
        guard credential.metadata.rpID == rpID, allows(credential) else {
            throw WebAuthnError.noMatchingCredential(reason: "the chosen credential cannot answer this request")
        }
        return try sign(options, origin: origin, with: credential)
    }

    /// authenticatorGetAssertion for `chosen`, which fits `options` (§6.3.3 steps 9 to 13).
    private func sign(
        _ options: PublicKeyCredentialRequestOptionsJSON, origin: String, with chosen: Credential
    ) throws -> (response: AuthenticationResponseJSON, credential: Credential) {
        let rpID = chosen.metadata.rpID

        // The counter is bumped and stored before anything is signed, under the vault's
        // lock, so two assertions, in any processes, never share a counter value. Through
        // an agent, the swap and the signature are one request.
        let clientDataJSON = CollectedClientData(type: CollectedClientData.getType, challenge: options.challenge.data, origin: origin).serialized()
        let rpIDHash = try DigestAlgorithm.sha256.hash(Data(rpID.utf8))
        let clientDataHash = try DigestAlgorithm.sha256.hash(clientDataJSON)
        var metadata = chosen.metadata
        var authenticatorData: AuthenticatorData?
        let signature: Data
        do {
            signature = try vault.updateMetadataAndSign(chosen.handle) { data in
                guard var current = CredentialMetadata.decode(data) else {
                    throw WebAuthnError.vault(reason: "credential metadata is unreadable")
                }
                current.signCount &+= 1
                if current.signCount == 0 { current.signCount = 1 }
                current.lastUsedAt = Date()
                metadata = current
                data = try current.encoded()
                let signed = try AuthenticatorData(rpIDHash: rpIDHash, flags: [.userPresent, .userVerified], signCount: current.signCount)
                authenticatorData = signed
                return signed.bytes + clientDataHash
            }.signature
        } catch let error as KeyVaultError {
            throw WebAuthnError.vault(reason: error.reason, underlying: error)
        }
        guard let authenticatorData else { throw WebAuthnError.vault(reason: "the vault signed without storing the counter") }
        let response = AuthenticationResponseJSON(
            credentialID: metadata.credentialID.data,
            clientDataJSON: clientDataJSON,
            authenticatorData: authenticatorData.bytes,
            signature: signature,
            userHandle: metadata.userHandle.data
        )
        return (response, Credential(handle: chosen.handle, metadata: metadata, algorithm: chosen.algorithm, protection: chosen.protection))
    }
}
