public import LatchkeyCrypto

/// An error from ``LatchkeyOAuth``.
///
/// Shaped like the other Latchkey errors: an open-ended ``code`` and a ``reason``. When a
/// provider answered with an RFC 6749 §5.2 (or §4.1.2.1) error, its `error`,
/// `error_description` and `error_uri` are kept in ``providerError``. Tokens, codes and
/// secrets never appear in reasons.
public struct OAuthError: LatchkeyErrorTemplate, Sendable {
    public var code: Code
    public var reason: String
    public var providerError: ProviderError?
    /// The error this one stands for: the transport's (a `URLError`), a decoder's, the
    /// crypto core's.
    public var underlying: (any Error)?
    public var file: String
    public var line: UInt

    public init(code: Code, reason: String, providerError: ProviderError? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.providerError = providerError
        self.underlying = underlying
        self.file = file
        self.line = line
    }

    package var details: String? { providerError.map { "\($0)" } }

    /// An error object from the provider (RFC 6749 §4.1.2.1, §5.2; RFC 7009 §2.2.1).
    public typealias ProviderError = OAuthErrorResponse
}

extension OAuthError {
    /// The kind of an ``OAuthError``. Open-ended: switch statements need a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        // Transport
        public static let insecureTransport = Code("insecureTransport")
        public static let network = Code("network")
        public static let responseTooLarge = Code("responseTooLarge")
        /// The whole exchange (connect, headers, body) outlasted ``TransportPolicy/timeout``.
        public static let timedOut = Code("timedOut")
        public static let unexpectedStatus = Code("unexpectedStatus")
        public static let malformedResponse = Code("malformedResponse")
        /// A request given to ``AccessTokenTransport`` already carries the headers it sets.
        public static let conflictingHeaders = Code("conflictingHeaders")
        /// A request given to ``AccessTokenTransport`` is for an origin its token is not
        /// allowed to go to; nothing was sent.
        public static let originNotAllowed = Code("originNotAllowed")
        /// Text that should be a web origin (``WebOrigin/init(parsing:)``) is not one.
        public static let invalidOrigin = Code("invalidOrigin")

        // Protocol
        public static let invalidPKCEVerifier = Code("invalidPKCEVerifier")
        public static let redirectURIMismatch = Code("redirectURIMismatch")
        public static let stateMismatch = Code("stateMismatch")
        public static let authorizationError = Code("authorizationError")
        public static let issuerMismatch = Code("issuerMismatch")
        public static let missingCode = Code("missingCode")
        public static let tokenError = Code("tokenError")
        /// RFC 8628 §3.5 `access_denied`: the person denied the device's sign-in.
        public static let deviceAccessDenied = Code("deviceAccessDenied")
        /// RFC 8628 §3.5 `expired_token`, or the device code ran out while polling.
        public static let deviceCodeExpired = Code("deviceCodeExpired")
        public static let unsupportedTokenType = Code("unsupportedTokenType")
        public static let discoveryIssuerMismatch = Code("discoveryIssuerMismatch")
        public static let endpointMissing = Code("endpointMissing")
        /// Discovery named an endpoint off the issuer's origin that the configuration does
        /// not allow.
        public static let endpointOutsideIssuer = Code("endpointOutsideIssuer")

        // JOSE
        public static let malformedJWS = Code("malformedJWS")
        /// A DPoP proof that fails a check of RFC 9449 §4.3 (the reason names which);
        /// a provider answers `invalid_dpop_proof`.
        public static let invalidDPoPProof = Code("invalidDPoPProof")
        /// A DPoP proof without the nonce the server requires, or with a stale one
        /// (RFC 9449 §8, §9); a provider answers `use_dpop_nonce` with a fresh `DPoP-Nonce`.
        public static let useDPoPNonce = Code("useDPoPNonce")
        /// A `private_key_jwt` client assertion that does not verify or breaks a rule of
        /// RFC 7523 §3 (``ClientAssertion/verify(_:clientID:keys:audiences:now:leeway:)``).
        public static let invalidClientAssertion = Code("invalidClientAssertion")
        public static let malformedJWK = Code("malformedJWK")
        public static let algorithmNotAllowed = Code("algorithmNotAllowed")
        public static let algorithmKeyMismatch = Code("algorithmKeyMismatch")
        public static let unsupportedCriticalHeader = Code("unsupportedCriticalHeader")
        public static let unknownKey = Code("unknownKey")
        public static let invalidSignature = Code("invalidSignature")

        // ID token (OIDC Core §3.1.3.7)
        public static let claimMissing = Code("claimMissing")
        public static let invalidIssuer = Code("invalidIssuer")
        public static let invalidAudience = Code("invalidAudience")
        public static let invalidAuthorizedParty = Code("invalidAuthorizedParty")
        public static let expired = Code("expired")
        public static let issuedInFuture = Code("issuedInFuture")
        public static let nonceMismatch = Code("nonceMismatch")
        public static let accessTokenHashMismatch = Code("accessTokenHashMismatch")
        public static let authenticationTooOld = Code("authenticationTooOld")
        public static let refreshedTokenMismatch = Code("refreshedTokenMismatch")
        /// A UserInfo response for another subject than the ID token's (OIDC Core §5.3.2).
        public static let subjectMismatch = Code("subjectMismatch")
        /// Protected resource metadata (RFC 9728) that does not describe the resource
        /// that pointed to it (§3.3, §7.3).
        public static let resourceMetadataMismatch = Code("resourceMetadataMismatch")
        /// A protected resource names only authorization servers the user has not allowed
        /// (RFC 9728 §7.6): nothing was sent to them.
        public static let providerNotAllowed = Code("providerNotAllowed")
    }
}
