#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import LatchkeyCrypto

/// An OAuth 2.0 / OpenID Connect client for one provider and one client registration:
/// discovery, authorization requests and redirects, the token endpoint (code exchange
/// with PKCE, refresh, revocation), userinfo, and ID-token validation against the
/// provider's JWKS.
///
/// An actor: its caches (discovery document, JWKS) and the refreshes in flight are its
/// own state, so it is safe to share between tasks, and there is no process-wide
/// configuration.
public actor OAuthClient {
    /// How the client authenticates at the token endpoint (RFC 6749 §2.3).
    public enum ClientAuthentication: Sendable {
        /// A public client (a CLI, a device): `client_id` in the body, no secret.
        case none
        /// `client_secret_basic` (RFC 6749 §2.3.1): id and secret form-encoded, then
        /// base64 in an `Authorization: Basic` header.
        case clientSecretBasic(secret: String)
        /// `private_key_jwt` (RFC 7523 §2.2, OIDC Core §9): a fresh ``ClientAssertion``
        /// signed by the client's key in every authenticated request, its `aud` the issuer
        /// identifier unless `audience` says the token endpoint.
        case privateKeyJWT(ClientAssertionSigner, audience: ClientAssertion.Audience = .issuer)
    }

    public struct Configuration: Sendable {
        public var issuer: URL
        public var clientID: String
        public var redirectURI: URL
        public var authentication: ClientAuthentication
        public var transport: any HTTPTransport
        /// Clock tolerance for token times.
        public var leeway: TimeInterval = 60
        /// How long a fetched JWKS is trusted before it is fetched again.
        public var jwksTimeToLive: TimeInterval = 600
        /// The least time between two JWKS fetches for an unknown `kid`, so a stream of
        /// tokens with made-up key ids cannot make the client hammer the provider.
        public var jwksMinimumRefetchInterval: TimeInterval = 30
        /// Whether an endpoint named by discovery that is *not* on the issuer's origin may
        /// still be used. By default none may: the code, the PKCE verifier, refresh tokens
        /// and access tokens go only where the issuer itself is (docs/SECURITY.md,
        /// "Where the client sends what"). Only https endpoints are ever offered to it.
        public var allowsForeignEndpoint: @Sendable (URL) -> Bool = { _ in false }

        public init(issuer: URL, clientID: String, redirectURI: URL, authentication: ClientAuthentication = .none, transport: any HTTPTransport = HTTP1Transport()) {
            self.issuer = issuer
            self.clientID = clientID
            self.redirectURI = redirectURI
            self.authentication = authentication
            self.transport = transport
        }
    }

    public nonisolated let configuration: Configuration
    private var cachedMetadata: ProviderMetadata?
    private var cachedKeys: (set: JWKSet, fetchedAt: Date)?
    private var refreshesInFlight: [String: Task<TokenSet, any Error>] = [:]

    public init(configuration: Configuration) throws {
        try TransportPolicy.check(configuration.issuer)
        self.configuration = configuration
    }

    private var validator: IDTokenValidator {
        var validator = IDTokenValidator(issuer: configuration.issuer.absoluteString, clientID: configuration.clientID)
        validator.leeway = configuration.leeway
        return validator
    }

    // MARK: Discovery

    /// The provider's metadata, fetched once and cached.
    public func metadata() async throws -> ProviderMetadata {
        if let cachedMetadata { return cachedMetadata }
        let response = try await send(TransportRequest(method: HTTPMethod.get, url: ProviderMetadata.discoveryURL(for: configuration.issuer), headers: ["Accept": "application/json"]))
        guard response.status == 200 else {
            throw OAuthError.unexpectedStatus(reason: "discovery answered HTTP \(response.status)")
        }
        let metadata = try ProviderMetadata.parse(response.body, issuer: configuration.issuer, allowingForeign: configuration.allowsForeignEndpoint)
        cachedMetadata = metadata
        return metadata
    }

    // MARK: Authorization

    /// A new authorization request with fresh state, nonce and PKCE pair; with `resource`,
    /// for that protected resource alone (RFC 8707 §2), which the code exchange repeats.
    public func authorizationRequest(
        scopes: [String] = [OAuthScope.openID], maxAge: TimeInterval? = nil, resource: String? = nil, additionalParameters: [String: String] = [:]
    ) async throws -> AuthorizationRequest {
        let metadata = try await metadata()
        if let methods = metadata.codeChallengeMethodsSupported, !methods.contains(PKCE.challengeMethod) {
            throw OAuthError.endpointMissing(reason: "the provider does not support PKCE S256")
        }
        return try AuthorizationRequest(
            authorizationEndpoint: metadata.authorizationEndpoint, clientID: configuration.clientID,
            redirectURI: configuration.redirectURI, scopes: scopes, maxAge: maxAge, resource: resource, additionalParameters: additionalParameters
        )
    }

    /// The authorization code from the redirect that answered `request` (see
    /// ``AuthorizationRequest/authorizationCode(from:expectedIssuer:issuerParameterRequired:)``).
    public func authorizationCode(from redirect: URL, for request: AuthorizationRequest) async throws -> String {
        let metadata = try await metadata()
        return try request.authorizationCode(
            from: redirect, expectedIssuer: configuration.issuer.absoluteString,
            issuerParameterRequired: metadata.authorizationResponseIssParameterSupported == true
        )
    }

    // MARK: Token endpoint

    /// Exchanges an authorization code (RFC 6749 §4.1.3, RFC 7636 §4.5) and validates the
    /// ID token against the request's nonce and max_age.
    public func exchange(code: String, for request: AuthorizationRequest, dpop: DPoPSigner? = nil) async throws -> TokenSet {
        try await exchange(
            code: code, codeVerifier: request.pkce.verifier, redirectURI: request.redirectURI, nonce: request.nonce, maxAge: request.maxAge,
            resource: request.resource, dpop: dpop
        )
    }

    /// Exchanges a code with an explicit verifier (for a back end that did not build the
    /// request). With `dpop`, the request carries a proof and the tokens come back bound
    /// to its key when the provider supports DPoP (RFC 9449 §5).
    /// `redirectURI` nil: a code from the authorization challenge endpoint, whose request
    /// named none, redeemed without one (draft-ietf-oauth-first-party-apps-04 §6).
    /// `resource`: the one the authorization asked for (RFC 8707 §2).
    public func exchange(
        code: String, codeVerifier: String, redirectURI: URL?, nonce: String?, maxAge: TimeInterval? = nil, resource: String? = nil, dpop: DPoPSigner? = nil
    ) async throws -> TokenSet {
        try PKCE.validate(verifier: codeVerifier)
        let metadata = try await metadata()
        let request = TokenRequest(
            grantType: .authorizationCode, code: code, redirectURI: redirectURI?.absoluteString, codeVerifier: codeVerifier, clientID: publicClientID,
            resource: resource
        )
        var tokens = try await tokenRequest(metadata.tokenEndpoint, request, dpop: dpop)
        if let idToken = tokens.idToken {
            tokens.idTokenClaims = try await validateIDToken(idToken, expectations: .init(nonce: nonce, maxAge: maxAge, accessToken: tokens.accessToken))
        }
        return tokens
    }

    /// Refreshes `tokens` (RFC 6749 §6). Concurrent calls for the same refresh token
    /// share one request. A rotated refresh token replaces the old one; a reply without
    /// one keeps the old (RFC 6749 §6 allows both). A new ID token is validated and must
    /// keep iss, sub and aud (OIDC Core §12.2).
    /// Tokens bound to a DPoP key are refreshed with a proof of it (`dpop`; RFC 9449 §5).
    /// Tokens for a protected resource are refreshed for it again (`resource`, RFC 8707 §2).
    public func refresh(_ tokens: TokenSet, scopes: [String]? = nil, resource: String? = nil, dpop: DPoPSigner? = nil) async throws -> TokenSet {
        guard let refreshToken = tokens.refreshToken else {
            throw OAuthError.tokenError(reason: "no refresh token to refresh with")
        }
        if tokens.isDPoPBound, dpop == nil {
            throw OAuthError.tokenError(reason: "these tokens are bound to a DPoP key: refresh them with its DPoPSigner")
        }
        if let running = refreshesInFlight[refreshToken] { return try await running.value }
        let task = Task { try await self.performRefresh(tokens, refreshToken: refreshToken, scopes: scopes, resource: resource, dpop: dpop) }
        refreshesInFlight[refreshToken] = task
        defer { refreshesInFlight[refreshToken] = nil }
        return try await task.value
    }

    private func performRefresh(_ tokens: TokenSet, refreshToken: String, scopes: [String]?, resource: String?, dpop: DPoPSigner?) async throws -> TokenSet {
        let metadata = try await metadata()
        let request = TokenRequest(
            grantType: .refreshToken, refreshToken: refreshToken, scope: scopes?.joined(separator: " "), clientID: publicClientID, resource: resource
        )
        var refreshed = try await tokenRequest(metadata.tokenEndpoint, request, dpop: dpop)
        if refreshed.refreshToken == nil { refreshed.refreshToken = refreshToken }
        if let idToken = refreshed.idToken {
            let claims = try await validateIDToken(idToken, expectations: .init(nonce: nil, accessToken: refreshed.accessToken))
            if let original = tokens.idTokenClaims { try validator.checkRefreshed(claims, original: original) }
            refreshed.idTokenClaims = claims
        } else {
            refreshed.idToken = tokens.idToken
            refreshed.idTokenClaims = tokens.idTokenClaims
        }
        return refreshed
    }

    /// Tokens for the client itself (RFC 6749 §4.4): a service signing in as itself, by
    /// its own authentication (``ClientAuthentication/privateKeyJWT(_:audience:)`` or a
    /// secret), with no person and so no ID token or refresh token expected. With `dpop`,
    /// the access token comes back bound to that key (RFC 9449 §5); with `resource`, it is
    /// asked for that protected resource alone (RFC 8707 §2).
    public func clientCredentials(scopes: [String]? = nil, resource: String? = nil, dpop: DPoPSigner? = nil) async throws -> TokenSet {
        if case .none = configuration.authentication {
            throw OAuthError.tokenError(reason: "the client credentials grant needs a client that authenticates (a client key or secret), not a public client (RFC 6749 §4.4)")
        }
        let metadata = try await metadata()
        let request = TokenRequest(grantType: .clientCredentials, scope: scopes?.joined(separator: " "), resource: resource)
        var tokens = try await tokenRequest(metadata.tokenEndpoint, request, dpop: dpop)
        // No person signed in: an ID token here would say nothing this grant asked for.
        tokens.idToken = nil
        return tokens
    }

    /// Revokes a token (RFC 7009 §2.1). Success, or an unknown token, is HTTP 200.
    public func revoke(_ token: String, hint: TokenTypeHint? = .refreshToken) async throws {
        let metadata = try await metadata()
        guard let endpoint = metadata.revocationEndpoint else {
            throw OAuthError.endpointMissing(reason: "the provider has no revocation endpoint")
        }
        let request = TokenRevocationRequest(token: token, tokenTypeHint: hint, clientID: publicClientID)
        let response = try await send(try formRequest(endpoint, request))
        guard response.status == 200 else { throw try Self.providerError(response, what: "revocation") }
    }

    /// The UserInfo response (OIDC Core §5.3), whose `sub` must match the ID token's (§5.3.2).
    /// With `dpop`, the token is presented with the DPoP scheme and a proof (RFC 9449 §7.1).
    public func userInfo(accessToken: String, expectedSubject: String?, dpop: DPoPSigner? = nil) async throws -> [String: JSONValue] {
        let metadata = try await metadata()
        guard let endpoint = metadata.userinfoEndpoint else {
            throw OAuthError.endpointMissing(reason: "the provider has no userinfo endpoint")
        }
        let response = try await sendWithDPoP(dpop) { dpop in
            var headers = ["Authorization": AccessTokenType.bearer.authorization(accessToken), "Accept": "application/json"]
            if let dpop { headers.merge(try dpop.headers(method: HTTPMethod.get, url: endpoint, accessToken: accessToken)) { $1 } }
            return TransportRequest(method: HTTPMethod.get, url: endpoint, headers: headers)
        }
        guard response.status == 200 else { throw try Self.providerError(response, what: "userinfo") }
        let claims = try JSONValue.object(from: response.body, what: "userinfo response")
        if let expectedSubject, claims["sub"]?.stringValue != expectedSubject {
            throw OAuthError.subjectMismatch(reason: "userinfo sub does not match the ID token's")
        }
        return claims
    }

    // MARK: ID tokens and keys

    /// Validates an ID token from this provider (OIDC Core §3.1.3.7).
    public func validateIDToken(_ idToken: String, expectations: IDTokenValidator.Expectations) async throws -> IDTokenClaims {
        try await validator.validate(idToken, expectations: expectations) { jws in try await self.key(for: jws) }
    }

    /// The key for a JWS: from the cached JWKS while fresh; an unknown `kid` triggers one
    /// refetch, no more often than ``Configuration/jwksMinimumRefetchInterval``.
    func key(for jws: JWS) async throws -> VerifyingKey {
        let now = Date()
        if let cached = cachedKeys, now.timeIntervalSince(cached.fetchedAt) < configuration.jwksTimeToLive, let key = try cached.set.key(for: jws) {
            return key
        }
        // Refetch when the cache is stale, or for an unknown kid no sooner than the minimum interval.
        let refetchAfter = min(configuration.jwksMinimumRefetchInterval, configuration.jwksTimeToLive)
        if cachedKeys.map({ now.timeIntervalSince($0.fetchedAt) >= refetchAfter }) ?? true {
            let metadata = try await metadata()
            let response = try await send(TransportRequest(method: HTTPMethod.get, url: metadata.jwksURI, headers: ["Accept": "application/json"]))
            guard response.status == 200 else {
                throw OAuthError.unexpectedStatus(reason: "JWKS answered HTTP \(response.status)")
            }
            cachedKeys = (try JWKSet(json: response.body), now)
        }
        guard let key = try cachedKeys?.set.key(for: jws) else {
            throw OAuthError.unknownKey(reason: "no key in the provider's JWKS fits kid \(jws.keyID ?? "(none)") and alg \(jws.algorithm)")
        }
        return key
    }

    // MARK: HTTP

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        try TransportPolicy.check(request.url)
        return try await configuration.transport.send(request)
    }

    /// The `client_id` a public client puts in its requests (RFC 6749 §3.2.1); nil for a
    /// client that authenticates.
    var publicClientID: String? {
        if case .none = configuration.authentication { return configuration.clientID }
        return nil
    }

    func formRequest(_ endpoint: URL, _ message: some FormParameters) throws -> TransportRequest {
        var headers = ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"]
        var items = message.formItems
        switch configuration.authentication {
        case .none:
            break
        case .clientSecretBasic(let secret):
            let credentials = FormEncoding.escape(configuration.clientID) + ":" + FormEncoding.escape(secret)
            headers["Authorization"] = "Basic " + Data(credentials.utf8).base64EncodedString()
        case .privateKeyJWT(let signer, let audience):
            // The issuer identifier as discovery gave it (checked equal to ours), or the
            // URL this very request goes to.
            let aud = audience == .issuer ? (cachedMetadata?.issuer ?? configuration.issuer.absoluteString) : endpoint.absoluteString
            let assertion = try ClientAssertion.make(clientID: configuration.clientID, audience: aud, signer: signer)
            items += ClientAuthenticationParameters(
                clientID: configuration.clientID, clientAssertionType: ClientAssertion.assertionType, clientAssertion: assertion
            ).formItems
        }
        return TransportRequest(method: HTTPMethod.post, url: endpoint, headers: headers, body: FormEncoding.encode(items))
    }

    func tokenRequest(_ endpoint: URL, _ message: TokenRequest, dpop: DPoPSigner? = nil) async throws -> TokenSet {
        let response = try await sendWithDPoP(dpop) { dpop in
            var request = try formRequest(endpoint, message)
            if let dpop { request.headers.merge(try dpop.headers(method: HTTPMethod.post, url: endpoint)) { $1 } }
            return request
        }
        guard response.status == 200 else { throw try Self.providerError(response, what: "the token endpoint") }
        return try TokenSet.parse(response.body, now: Date(), dpop: dpop != nil)
    }

    /// Sends a request made by `make`; with a DPoP key, through its nonce dance
    /// (``DPoPSigner/send(through:_:)``).
    private func sendWithDPoP(_ dpop: DPoPSigner?, _ make: (DPoPSigner?) throws -> TransportRequest) async throws -> TransportResponse {
        guard let dpop else { return try await send(make(nil)) }
        let transport = configuration.transport
        return try await dpop.send(through: transport) { signer in
            let request = try make(signer)
            try TransportPolicy.check(request.url)
            return request
        }
    }

    /// An RFC 6749 §5.2 error response as an ``OAuthError``.
    static func providerError(_ response: TransportResponse, what: String) throws -> OAuthError {
        guard response.body.count <= 64 * 1024, let answer = try? JSONDecoder().decode(OAuthErrorResponse.self, from: response.body), answer.error != nil else {
            return OAuthError.unexpectedStatus(reason: "\(what) answered HTTP \(response.status) without an OAuth error object")
        }
        return OAuthError.tokenError(reason: "\(what) refused the request (HTTP \(response.status))", providerError: answer)
    }
}
