public import LatchkeyOAuth

// One factory per ``LatchkeyError/Code``, as swift-certificates' `CertificateError` has: a call
// site names the kind of failure first and cannot pair a reason with the wrong code.
extension LatchkeyError {
    /// The URL is neither form of bind URL (or of authenticate URL) that Latchkey reads.
    public static func notABindURL(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .notABindURL, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    public static func notAnAuthenticateURL(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .notAnAuthenticateURL, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// The URL's host, or a URL the provider pointed to, is outside the allowed domains.
    public static func domainNotAllowed(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .domainNotAllowed, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// No credential in this vault fits the provider (or the one asked for is absent).
    public static func noCredential(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .noCredential, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// No client key for that provider and client id: make one
    /// (``Embedded/clientKey(issuer:clientID:)``) and register its JWK Set first.
    public static func clientKeyMissing(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .clientKeyMissing, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// This vault already holds a credential for the user at that provider (the
    /// provider excluded it, WebAuthn §5.4 `excludeCredentials`).
    public static func credentialExists(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .credentialExists, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// The provider revoked the credential; it is marked revoked in the vault.
    public static func credentialRevoked(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .credentialRevoked, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// A transfer code is not 9 symbols of Crockford base32 (or the provider refused it).
    public static func invalidTransferCode(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .invalidTransferCode, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// The exporting device declined the import.
    public static func transferDeclined(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .transferDeclined, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// The transfer ended without a credential: expired, cancelled, or closed after
    /// too many wrong codes.
    public static func transferEnded(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .transferEnded, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// The flow reached a step this app does not answer (no handler, or unknown name).
    public static func stepUnsupported(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .stepUnsupported, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// The step handler's answer does not fit the step (for example an unknown credential id).
    public static func invalidStepAnswer(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .invalidStepAnswer, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// The provider refused the request; ``LatchkeyError/providerError`` has its words.
    public static func providerError(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .providerError, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// The provider's answer is not what the protocol allows (shape, size, origin).
    public static func malformedResponse(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .malformedResponse, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// The provider could not be reached, or the connection failed.
    public static func network(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .network, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// The provider did not answer within the request deadline, or a flow spent its
    /// whole deadline waiting on providers (``Embedded/Configuration/requestTimeout``,
    /// ``Embedded/Configuration/flowTimeout``).
    public static func timeout(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .timeout, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// The key agent failed: unreachable, stopped mid-request, locked, or it refused.
    public static func agent(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .agent, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// The key vault failed (wrong passphrase, permissions, disk).
    public static func vault(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .vault, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// No TPM answers where `TPM2OPENSSL_TCTI` points (default `/dev/tpmrm0`), it is
    /// busy or stopped answering, or OpenSSL's tpm2 provider is missing. Nothing in the
    /// vault changed; it works again once the TPM answers.
    public static func tpmUnavailable(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .tpmUnavailable, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// A registration with TPM attestation could not be made (``Code/attestationFailed``).
    public static func attestationFailed(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .attestationFailed, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// A TPM key or TPM-sealed vault meets a TPM that cannot use it: another host's, or
    /// this one after it was cleared. Nothing was deleted.
    public static func wrongTPM(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .wrongTPM, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// A cryptographic operation failed in OpenSSL (`CryptoError`;
    /// ``LatchkeyError/underlying`` has it, with OpenSSL's own error queue).
    public static func crypto(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .crypto, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// OAuth checks failed (state, issuer, ID token, PKCE).
    public static func oauth(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .oauth, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// DPoP-bound tokens were asked for and the provider issued bearer tokens: it does
    /// not support DPoP (RFC 9449 §5). No tokens were kept.
    public static func dpopNotBound(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .dpopNotBound, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// The person denied the device's sign-in (RFC 8628 §3.5 `access_denied`).
    public static func deviceAccessDenied(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .deviceAccessDenied, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// The device code expired before anyone approved it (RFC 8628 §3.5 `expired_token`).
    public static func deviceCodeExpired(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .deviceCodeExpired, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// A WebAuthn check failed on this side (RP ID, origin, algorithm).
    public static func webAuthn(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .webAuthn, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// The caller cancelled the operation.
    public static func cancelled(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .cancelled, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// An argument is unusable (for example a malformed issuer URL).
    public static func invalidArgument(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .invalidArgument, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// Another application is the desktop's handler for the link scheme.
    public static func schemeOwned(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .schemeOwned, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }

    /// A desktop entry, `mimeapps.list` or one of the xdg tools failed.
    public static func desktopIntegration(
        reason: String, providerError: OAuthError.ProviderError? = nil, step: String? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> LatchkeyError {
        LatchkeyError(code: .desktopIntegration, reason: reason, providerError: providerError, step: step, underlying: underlying, file: file, line: line)
    }
}
