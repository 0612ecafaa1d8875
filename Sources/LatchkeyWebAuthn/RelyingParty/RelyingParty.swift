#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto

/// A WebAuthn relying party's verification of registrations (§7.1) and assertions (§7.2),
/// step by step in the spec's order, each failure with its own ``WebAuthnError/Code``.
///
/// Supported attestation: `none`, `packed` self attestation, and `tpm` (§8.3) when
/// ``attestationRoots`` names the CAs whose AIK certificates the RP trusts. A `packed`
/// statement with a certificate chain (`x5c`) is refused unless
/// ``acceptsUncheckedAttestation`` is set, in which case it is treated as no attestation
/// (its chain is not checked).
public struct RelyingParty: Sendable {
    /// The RP ID (§5.1.4.1): a domain, or a loopback address for local use.
    public var id: String
    /// Origins the RP accepts in client data, compared exactly (§13.4.9).
    public var origins: [String]
    /// Credential algorithms accepted, in the RP's order of preference.
    public var allowedAlgorithms: [SigningAlgorithm] = [.es256, .ed25519]
    /// Whether user verification is required (§7.1 step 15, §7.2 step 17).
    public var requiresUserVerification = false
    /// Whether a ceremony run in a cross-origin iframe is accepted (§7.1 step 10).
    public var allowsCrossOrigin = false
    /// Whether `packed` attestation with a certificate chain is accepted as unchecked.
    public var acceptsUncheckedAttestation = false
    /// The roots a `tpm` attestation's AIK certificate must chain to (§8.3.2's trust
    /// anchors). Empty: `tpm` statements are refused as unsupported, since none could be
    /// checked.
    public var attestationRoots: [X509Certificate] = []

    public init(id: String, origins: [String]) {
        self.id = id
        self.origins = origins
    }

    /// What a verified registration yields: the credential to store.
    public struct RegisteredCredential: Hashable, Sendable {
        public var id: Data
        public var publicKey: COSEKey
        public var signCount: UInt32
        public var backupEligible: Bool
        public var backupState: Bool
        public var userVerified: Bool
        public var attestationFormat: String
        public var aaguid: Data
        public var transports: [String]

        public init(
            id: Data, publicKey: COSEKey, signCount: UInt32, backupEligible: Bool, backupState: Bool,
            userVerified: Bool, attestationFormat: String, aaguid: Data, transports: [String]
        ) {
            self.id = id
            self.publicKey = publicKey
            self.signCount = signCount
            self.backupEligible = backupEligible
            self.backupState = backupState
            self.userVerified = userVerified
            self.attestationFormat = attestationFormat
            self.aaguid = aaguid
            self.transports = transports
        }
    }

    /// What a verified assertion yields.
    public struct VerifiedAssertion: Hashable, Sendable {
        public var credentialID: Data
        public var signCount: UInt32
        public var userVerified: Bool
        public var backupState: Bool
        public var userHandle: Data?
    }

    // MARK: Registration, §7.1

    /// Verifies a registration response made for `challenge`.
    public func verifyRegistration(_ response: RegistrationResponseJSON, challenge: Data) throws -> RegisteredCredential {
        // Steps 5-6: clientDataJSON, parsed.
        let clientDataJSON = response.response.clientDataJSON.data
        let clientData = try CollectedClientData(json: clientDataJSON)
        // Steps 7-10.
        try checkClientData(clientData, type: CollectedClientData.createType, challenge: challenge)
        // Step 11.
        let clientDataHash = try DigestAlgorithm.sha256.hash(clientDataJSON)
        // Step 12.
        let attestation = try AttestationObject(encoded: response.response.attestationObject.data)
        let authData = attestation.authenticatorData
        guard let attested = authData.attestedCredentialData else {
            throw WebAuthnError.malformedAuthenticatorData(reason: "registration without attested credential data")
        }
        guard response.rawId.data == attested.credentialID, response.id == Base64URLBytes(attested.credentialID).description else {
            throw WebAuthnError.credentialIDMismatch(reason: "id, rawId and the attested credential ID differ")
        }
        // Steps 13-17.
        try checkAuthenticatorData(authData)
        // Step 19: the credential algorithm is one the RP asked for.
        guard allowedAlgorithms.contains(attested.credentialPublicKey.algorithm) else {
            throw WebAuthnError.algorithmNotAllowed(reason: "credential algorithm \(attested.credentialPublicKey.algorithm) not allowed")
        }
        // Steps 21-22: attestation statement.
        try verifyAttestation(attestation, credentialKey: attested.credentialPublicKey, clientDataHash: clientDataHash)
        // Step 25.
        guard attested.credentialID.count <= AuthenticatorData.maximumCredentialIDLength else {
            throw WebAuthnError.credentialIDTooLong(reason: "credential ID over 1023 bytes")
        }
        return RegisteredCredential(
            id: attested.credentialID,
            publicKey: attested.credentialPublicKey,
            signCount: authData.signCount,
            backupEligible: authData.flags.contains(.backupEligible),
            backupState: authData.flags.contains(.backupState),
            userVerified: authData.flags.contains(.userVerified),
            attestationFormat: attestation.format,
            aaguid: attested.aaguid,
            transports: response.response.transports ?? []
        )
    }

    // MARK: Authentication, §7.2

    /// Verifies an assertion made for `challenge` with `credential`, the record stored at
    /// registration (its counter as last updated). `allowedCredentialIDs`, when not empty,
    /// are the IDs the options listed (§7.2 step 5).
    public func verifyAuthentication(
        _ response: AuthenticationResponseJSON,
        challenge: Data,
        credential: RegisteredCredential,
        allowedCredentialIDs: [Data] = []
    ) throws -> VerifiedAssertion {
        // Step 5.
        guard allowedCredentialIDs.isEmpty || allowedCredentialIDs.contains(response.rawId.data) else {
            throw WebAuthnError.credentialNotAllowed(reason: "the credential was not in allowCredentials")
        }
        // Step 6: the response names the stored credential.
        guard response.rawId.data == credential.id, response.id == Base64URLBytes(credential.id).description else {
            throw WebAuthnError.credentialIDMismatch(reason: "the response is for another credential")
        }
        // Steps 8-14.
        let clientDataJSON = response.response.clientDataJSON.data
        let clientData = try CollectedClientData(json: clientDataJSON)
        try checkClientData(clientData, type: CollectedClientData.getType, challenge: challenge)
        let authData = try AuthenticatorData(bytes: response.response.authenticatorData.data)
        guard authData.attestedCredentialData == nil else {
            throw WebAuthnError.malformedAuthenticatorData(reason: "assertion with attested credential data")
        }
        // Steps 15-18.
        try checkAuthenticatorData(authData)
        guard authData.flags.contains(.backupEligible) == credential.backupEligible else {
            throw WebAuthnError.backupEligibilityChanged(reason: "the backup eligibility flag changed since registration")
        }
        // Steps 20-21: signature over authData ‖ SHA-256(clientDataJSON).
        let signed = authData.bytes + (try DigestAlgorithm.sha256.hash(clientDataJSON))
        guard credential.publicKey.verifyingKey.isValidSignature(response.response.signature.data, for: signed) else {
            throw WebAuthnError.invalidSignature(reason: "the assertion signature does not verify")
        }
        // Step 22: a counter that does not grow signals a possible cloned authenticator.
        if authData.signCount != 0 || credential.signCount != 0, authData.signCount <= credential.signCount {
            throw WebAuthnError.signCountNotIncreased(reason: "signature counter \(authData.signCount) is not above the stored \(credential.signCount)"
            )
        }
        return VerifiedAssertion(
            credentialID: credential.id,
            signCount: authData.signCount,
            userVerified: authData.flags.contains(.userVerified),
            backupState: authData.flags.contains(.backupState),
            userHandle: response.response.userHandle?.data
        )
    }

    // MARK: Shared steps

    /// §7.1 steps 7-10 / §7.2 steps 11-14.
    private func checkClientData(_ clientData: CollectedClientData, type: String, challenge: Data) throws {
        guard clientData.type == type else {
            throw WebAuthnError.wrongCeremonyType(reason: "client data type is \"\(clientData.type)\", expected \"\(type)\"")
        }
        guard ConstantTime.isEqual(clientData.challenge, challenge) else {
            throw WebAuthnError.challengeMismatch(reason: "the challenge is not the one issued")
        }
        guard origins.contains(clientData.origin) else {
            throw WebAuthnError.originMismatch(reason: "origin \(clientData.origin) is not expected")
        }
        guard allowsCrossOrigin || (!clientData.crossOrigin && clientData.topOrigin == nil) else {
            throw WebAuthnError.crossOriginNotAllowed(reason: "the ceremony ran in a cross-origin context")
        }
    }

    /// §7.1 steps 13-17 / §7.2 steps 15-18.
    private func checkAuthenticatorData(_ authData: AuthenticatorData) throws {
        guard ConstantTime.isEqual(authData.rpIDHash, try DigestAlgorithm.sha256.hash(Data(id.utf8))) else {
            throw WebAuthnError.rpIDHashMismatch(reason: "rpIdHash is not SHA-256 of \(id)")
        }
        guard authData.flags.contains(.userPresent) else {
            throw WebAuthnError.userNotPresent(reason: "the user-present flag is not set")
        }
        guard !requiresUserVerification || authData.flags.contains(.userVerified) else {
            throw WebAuthnError.userNotVerified(reason: "user verification was required")
        }
        guard authData.flags.contains(.backupEligible) || !authData.flags.contains(.backupState) else {
            throw WebAuthnError.backupStateWithoutEligibility(reason: "backup state set without backup eligibility")
        }
    }

    /// §7.1 steps 21-22 for the supported formats.
    private func verifyAttestation(_ attestation: AttestationObject, credentialKey: COSEKey, clientDataHash: Data) throws {
        switch AttestationStatementFormat(rawValue: attestation.format) {
        case .none?:
            guard attestation.statement.mapEntries?.isEmpty == true else {
                throw WebAuthnError.invalidAttestation(reason: "a none attestation must have an empty statement")
            }
        case .packed?:
            let statement = attestation.statement
            guard let alg = statement["alg"]?.intValue, let signature = statement["sig"]?.bytesValue else {
                throw WebAuthnError.invalidAttestation(reason: "packed statement without alg or sig")
            }
            if statement["x5c"] != nil {
                guard acceptsUncheckedAttestation else {
                    throw WebAuthnError.unsupportedAttestationFormat(reason: "packed attestation with a certificate chain is not supported")
                }
                return
            }
            // Self attestation (§8.2 verification procedure, no x5c).
            guard alg == credentialKey.algorithm.coseIdentifier else {
                throw WebAuthnError.invalidAttestation(reason: "packed alg \(alg) differs from the credential's")
            }
            guard credentialKey.verifyingKey.isValidSignature(signature, for: attestation.authenticatorData.bytes + clientDataHash) else {
                throw WebAuthnError.invalidAttestation(reason: "the packed self-attestation signature does not verify")
            }
        case .tpm?:
            guard !attestationRoots.isEmpty else {
                throw WebAuthnError.unsupportedAttestationFormat(reason: "tpm attestation needs attestation roots, and none are configured")
            }
            try TPMAttestationStatement(attestation.statement).verify(
                authenticatorData: attestation.authenticatorData, clientDataHash: clientDataHash, roots: attestationRoots
            )
        default:
            throw WebAuthnError.unsupportedAttestationFormat(reason: "attestation format \"\(attestation.format)\" is not supported")
        }
    }
}
