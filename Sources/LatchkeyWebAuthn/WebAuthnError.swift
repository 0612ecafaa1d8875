public import LatchkeyCrypto

/// An error from ``LatchkeyWebAuthn``: parsing WebAuthn structures, verifying them as a
/// relying party, or acting as an authenticator.
///
/// As in swift-certificates, ``code`` is an open set to match on and ``reason`` says what
/// failed in words. Each relying-party check of WebAuthn §7.1 and §7.2 has its own code, so
/// a caller (and a test) can tell exactly which rule a response broke.
public struct WebAuthnError: LatchkeyErrorTemplate, Sendable {
    public var code: Code
    public var reason: String
    /// The error underneath, when there is one (the vault's ``KeyVaultError`` for
    /// ``Code/vault``, which tells a missing TPM from another TPM's key).
    public var underlying: (any Error)?
    public var file: String
    public var line: UInt

    public init(code: Code, reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.underlying = underlying
        self.file = file
        self.line = line
    }

}

extension WebAuthnError {
    /// The kind of a ``WebAuthnError``. Open-ended: switch statements need a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        // Parsing
        public static let malformedCBOR = Code("malformedCBOR")
        public static let malformedCOSEKey = Code("malformedCOSEKey")
        public static let malformedAuthenticatorData = Code("malformedAuthenticatorData")
        public static let malformedAttestationObject = Code("malformedAttestationObject")
        public static let malformedClientData = Code("malformedClientData")
        public static let malformedJSON = Code("malformedJSON")
        /// A TPM 2.0 structure of a `tpm` attestation statement (`certInfo`, `pubArea`) that
        /// does not parse (TPM 2.0 Library Part 2).
        public static let malformedTPMStructure = Code("malformedTPMStructure")
        public static let unsupportedAlgorithm = Code("unsupportedAlgorithm")

        // Relying-party checks, in the order of WebAuthn §7.1 / §7.2
        public static let credentialIDMismatch = Code("credentialIDMismatch")
        public static let credentialNotAllowed = Code("credentialNotAllowed")
        public static let wrongCeremonyType = Code("wrongCeremonyType")
        public static let challengeMismatch = Code("challengeMismatch")
        public static let originMismatch = Code("originMismatch")
        public static let crossOriginNotAllowed = Code("crossOriginNotAllowed")
        public static let rpIDHashMismatch = Code("rpIDHashMismatch")
        public static let userNotPresent = Code("userNotPresent")
        public static let userNotVerified = Code("userNotVerified")
        public static let backupStateWithoutEligibility = Code("backupStateWithoutEligibility")
        public static let backupEligibilityChanged = Code("backupEligibilityChanged")
        public static let algorithmNotAllowed = Code("algorithmNotAllowed")
        public static let unsupportedAttestationFormat = Code("unsupportedAttestationFormat")
        public static let invalidAttestation = Code("invalidAttestation")
        public static let invalidSignature = Code("invalidSignature")
        public static let signCountNotIncreased = Code("signCountNotIncreased")
        public static let credentialIDTooLong = Code("credentialIDTooLong")

        // Authenticator
        public static let insecureOrigin = Code("insecureOrigin")
        public static let invalidRelyingPartyID = Code("invalidRelyingPartyID")
        public static let excludedCredentialExists = Code("excludedCredentialExists")
        public static let noMatchingCredential = Code("noMatchingCredential")
        public static let credentialChoiceRequired = Code("credentialChoiceRequired")
        public static let vault = Code("vault")
        /// The authenticator could not attest a new credential: no TPM key to certify, or
        /// the TPM refused TPM2_Certify (``underlying`` has the TPM's answer).
        public static let attestationFailed = Code("attestationFailed")
    }
}
