// One factory per ``OAuthError/Code``, as swift-certificates' `CertificateError` has: a call
// site names the kind of failure first and cannot pair a reason with the wrong code.
extension OAuthError {

    public static func insecureTransport(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .insecureTransport, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func network(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .network, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func responseTooLarge(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .responseTooLarge, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    /// The whole exchange (connect, headers, body) outlasted ``TransportPolicy/timeout``.
    public static func timedOut(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .timedOut, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func unexpectedStatus(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .unexpectedStatus, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func malformedResponse(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .malformedResponse, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    /// A request given to ``AccessTokenTransport`` already carries the headers it sets.
    public static func conflictingHeaders(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .conflictingHeaders, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    /// A request given to ``AccessTokenTransport`` is for an origin its token is not
    /// allowed to go to; nothing was sent.
    public static func originNotAllowed(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .originNotAllowed, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    /// Text that should be a web origin (``WebOrigin/init(parsing:)``) is not one.
    public static func invalidOrigin(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .invalidOrigin, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func invalidPKCEVerifier(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .invalidPKCEVerifier, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func redirectURIMismatch(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .redirectURIMismatch, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func stateMismatch(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .stateMismatch, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func authorizationError(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .authorizationError, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func issuerMismatch(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .issuerMismatch, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func missingCode(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .missingCode, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func deviceAccessDenied(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .deviceAccessDenied, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func deviceCodeExpired(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .deviceCodeExpired, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func tokenError(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .tokenError, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func unsupportedTokenType(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .unsupportedTokenType, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func discoveryIssuerMismatch(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .discoveryIssuerMismatch, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func endpointMissing(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .endpointMissing, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    /// Discovery named an endpoint off the issuer's origin that the configuration does
    /// not allow.
    public static func endpointOutsideIssuer(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .endpointOutsideIssuer, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func malformedJWS(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .malformedJWS, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    /// A DPoP proof that fails a check of RFC 9449 §4.3 (the reason names which);
    /// a provider answers `invalid_dpop_proof`.
    public static func invalidDPoPProof(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .invalidDPoPProof, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    /// A DPoP proof without the nonce the server requires, or with a stale one
    /// (RFC 9449 §8, §9); a provider answers `use_dpop_nonce` with a fresh `DPoP-Nonce`.
    public static func useDPoPNonce(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .useDPoPNonce, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    /// A `private_key_jwt` client assertion that does not verify or breaks a rule of
    /// RFC 7523 §3 (``ClientAssertion/verify(_:clientID:keys:audiences:now:leeway:)``).
    public static func invalidClientAssertion(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .invalidClientAssertion, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func malformedJWK(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .malformedJWK, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func algorithmNotAllowed(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .algorithmNotAllowed, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func algorithmKeyMismatch(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .algorithmKeyMismatch, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func unsupportedCriticalHeader(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .unsupportedCriticalHeader, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func unknownKey(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .unknownKey, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func invalidSignature(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .invalidSignature, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func claimMissing(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .claimMissing, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func invalidIssuer(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .invalidIssuer, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func invalidAudience(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .invalidAudience, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func invalidAuthorizedParty(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .invalidAuthorizedParty, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func expired(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .expired, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func issuedInFuture(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .issuedInFuture, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func nonceMismatch(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .nonceMismatch, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func accessTokenHashMismatch(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .accessTokenHashMismatch, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func authenticationTooOld(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .authenticationTooOld, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    public static func refreshedTokenMismatch(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .refreshedTokenMismatch, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    /// A UserInfo response for another subject than the ID token's (OIDC Core §5.3.2).
    public static func subjectMismatch(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .subjectMismatch, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    /// Protected resource metadata that does not describe the resource that pointed to it
    /// (RFC 9728 §3.3, §7.3).
    public static func resourceMetadataMismatch(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .resourceMetadataMismatch, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }

    /// A protected resource names only authorization servers the user has not allowed
    /// (RFC 9728 §7.6).
    public static func providerNotAllowed(
        reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> OAuthError {
        OAuthError(code: .providerNotAllowed, reason: reason, providerError: providerError, underlying: underlying, file: file, line: line)
    }
}
