public import LatchkeyCrypto

public import LatchkeyOAuth

/// An error from the ``Embedded`` facade.
///
/// Shaped like the other Latchkey errors (and swift-certificates'): an open-ended ``code``
/// to match on and a ``reason`` written for the person at the keyboard, saying what
/// happened and what they can do. When the identity provider answered with an OAuth-style
/// error object (RFC 6749 §5.2), it is kept in ``providerError``. Reasons never carry
/// tokens, codes or key material.
///
/// An error from a layer below (`CryptoError`, `KeyVaultError`,
/// `WebAuthnError`, `OAuthError`, or an app's own error
/// thrown from a step handler) is kept whole in ``underlying``, and ``file`` and ``line``
/// then say where that error arose, not where the facade wrapped it.
public struct LatchkeyError: LatchkeyErrorTemplate, Sendable {
    public var code: Code
    public var reason: String
    /// The provider's `error` / `error_description`, when a provider answered with one.
    public var providerError: OAuthError.ProviderError?
    /// The flow step involved, for ``Code/stepUnsupported`` and step failures.
    public var step: String?
    /// The error this one stands for, when it came from a layer below or from the app.
    public var underlying: (any Error)?
    public var file: String
    public var line: UInt

    public init(
        code: Code,
        reason: String,
        providerError: OAuthError.ProviderError? = nil,
        step: String? = nil,
        underlying: (any Error)? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) {
        self.code = code
        self.reason = reason
        self.providerError = providerError
        self.step = step
        self.underlying = underlying
        self.file = file
        self.line = line
    }

    package var details: String? { providerError.map { "\($0)" } }
}

extension LatchkeyError {
    /// The kind of a ``LatchkeyError``. Open-ended: switch statements need a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The URL is neither form of bind URL (or of authenticate URL) that Latchkey reads.
        public static let notABindURL = Code("notABindURL")
        public static let notAnAuthenticateURL = Code("notAnAuthenticateURL")
        /// The URL's host, or a URL the provider pointed to, is outside the allowed domains.
        public static let domainNotAllowed = Code("domainNotAllowed")
        /// No credential in this vault fits the provider (or the one asked for is absent).
        public static let noCredential = Code("noCredential")
        /// No client key for that provider and client id: make one
        /// (``Embedded/clientKey(issuer:clientID:)``) and register its JWK Set first.
        public static let clientKeyMissing = Code("clientKeyMissing")
        /// This vault already holds a credential for the user at that provider (the
        /// provider excluded it, WebAuthn §5.4 `excludeCredentials`).
        public static let credentialExists = Code("credentialExists")
        /// The provider revoked the credential; it is marked revoked in the vault.
        public static let credentialRevoked = Code("credentialRevoked")
        /// A transfer code is not 9 symbols of Crockford base32 (or the provider refused it).
        public static let invalidTransferCode = Code("invalidTransferCode")
        /// The exporting device declined the import.
        public static let transferDeclined = Code("transferDeclined")
        /// The transfer ended without a credential: expired, cancelled, or closed after
        /// too many wrong codes.
        public static let transferEnded = Code("transferEnded")
        /// The flow reached a step this app does not answer (no handler, or unknown name).
        public static let stepUnsupported = Code("stepUnsupported")
        /// The step handler's answer does not fit the step (for example an unknown credential id).
        public static let invalidStepAnswer = Code("invalidStepAnswer")
        /// The provider refused the request; ``LatchkeyError/providerError`` has its words.
        public static let providerError = Code("providerError")
        /// The provider's answer is not what the protocol allows (shape, size, origin).
        public static let malformedResponse = Code("malformedResponse")
        /// The provider could not be reached, or the connection failed.
        public static let network = Code("network")
        /// The provider did not answer within the request deadline, or a flow spent its
        /// whole deadline waiting on providers (``Embedded/Configuration/requestTimeout``,
        /// ``Embedded/Configuration/flowTimeout``).
        public static let timeout = Code("timeout")
        /// The key vault failed (wrong passphrase, permissions, disk).
        public static let vault = Code("vault")
        /// The key agent (`latchkey agent`, docs/SECURITY.md "The key agent") failed: its
        /// socket cannot be made or reached, it stopped or was killed mid-request, is
        /// locked, or refused (a signature not confirmed at its terminal).
        public static let agent = Code("agent")
        /// No TPM answers where `TPM2OPENSSL_TCTI` points (default `/dev/tpmrm0`), it is
        /// busy or stopped answering, or OpenSSL's tpm2 provider is missing. Nothing in the
        /// vault changed; it works again once the TPM answers.
        public static let tpmUnavailable = Code("tpmUnavailable")
        /// A TPM key or TPM-sealed vault meets a TPM that cannot use it: another host's, or
        /// this one after it was cleared. Nothing was deleted.
        public static let wrongTPM = Code("wrongTPM")
        /// A registration with TPM attestation could not be made: the new key is not in a
        /// TPM, the TPM has no endorsement key certificate, the attestation CA refused to
        /// certify the attestation key, or the TPM refused TPM2_Certify (docs/SECURITY.md,
        /// "Proving keys live in the TPM"). Nothing was registered or kept.
        public static let attestationFailed = Code("attestationFailed")
        /// A cryptographic operation failed in OpenSSL (`CryptoError`;
        /// ``LatchkeyError/underlying`` has it, with OpenSSL's own error queue).
        public static let crypto = Code("crypto")
        /// OAuth checks failed (state, issuer, ID token, PKCE).
        public static let oauth = Code("oauth")
        /// DPoP-bound tokens were asked for and the provider issued bearer tokens: it does
        /// not support DPoP (RFC 9449 §5). No tokens were kept.
        public static let dpopNotBound = Code("dpopNotBound")
        /// The person denied the device's sign-in (RFC 8628 §3.5 `access_denied`).
        public static let deviceAccessDenied = Code("deviceAccessDenied")
        /// The device code expired before anyone approved it (RFC 8628 §3.5 `expired_token`).
        public static let deviceCodeExpired = Code("deviceCodeExpired")
        /// A WebAuthn check failed on this side (RP ID, origin, algorithm).
        public static let webAuthn = Code("webAuthn")
        /// The caller cancelled the operation.
        public static let cancelled = Code("cancelled")
        /// An argument is unusable (for example a malformed issuer URL).
        public static let invalidArgument = Code("invalidArgument")
        /// Another application is the desktop's handler for the link scheme
        /// (``DeepLinkRegistration``); nothing was changed.
        public static let schemeOwned = Code("schemeOwned")
        /// A desktop entry, `mimeapps.list` or one of the xdg tools failed.
        public static let desktopIntegration = Code("desktopIntegration")
    }
}
