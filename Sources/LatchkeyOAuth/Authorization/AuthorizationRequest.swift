#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import LatchkeyCrypto

/// An authorization request (RFC 6749 §4.1.1 with RFC 7636 §4.3 and OIDC Core §3.1.2.1),
/// and the secrets the client keeps until the redirect comes back: `state`, `nonce` and
/// the PKCE verifier, each fresh and random.
public struct AuthorizationRequest: Sendable {
    public let url: URL
    public let redirectURI: URL
    public let state: String
    public let nonce: String
    public let pkce: PKCE
    public let scopes: [String]
    public let maxAge: TimeInterval?
    /// The protected resource the tokens are asked for (RFC 8707 §2), sent again with the
    /// code at the token endpoint; nil for the provider's own tokens.
    public let resource: String?

    /// Builds the request URL on `authorizationEndpoint`.
    public init(
        authorizationEndpoint: URL,
        clientID: String,
        redirectURI: URL,
        scopes: [String],
        maxAge: TimeInterval? = nil,
        resource: String? = nil,
        additionalParameters: [String: String] = [:]
    ) throws {
        try TransportPolicy.check(authorizationEndpoint)
        let state = Base64URL.encode(try SecureRandom.bytes(count: 32))
        let nonce = Base64URL.encode(try SecureRandom.bytes(count: 32))
        let pkce = try PKCE.generate()
        guard let components = URLComponents(url: authorizationEndpoint, resolvingAgainstBaseURL: false) else {
            throw OAuthError.malformedResponse(reason: "the authorization endpoint is not a URL")
        }
        let parameters = AuthorizationRequestParameters(
            clientID: clientID, redirectURI: redirectURI.absoluteString, scope: scopes.joined(separator: " "), state: state, nonce: nonce,
            codeChallenge: pkce.challenge, codeChallengeMethod: pkce.method, maxAge: maxAge.map { String(Int($0)) }, resource: resource
        )
        // What the request sets itself cannot be overridden or repeated by an addition.
        let reserved = Set(parameters.formItems.map(\.0))
        let additional = additionalParameters.sorted(by: { $0.key < $1.key }).filter { !reserved.contains($0.key) }.map { ($0.key, $0.value) }
        guard let url = FormEncoding.url(components, appending: parameters.formItems + additional) else {
            throw OAuthError.malformedResponse(reason: "cannot build the authorization URL")
        }
        self.url = url
        self.redirectURI = redirectURI
        self.state = state
        self.nonce = nonce
        self.pkce = pkce
        self.scopes = scopes
        self.maxAge = maxAge
        self.resource = resource
    }

    /// Parses the redirect that ends the authorization step (RFC 6749 §4.1.2), checking,
    /// in this order: the redirect URI is ours; `state` matches, in constant time, before
    /// anything else is believed (so an error response with a wrong state is a state
    /// error); an `error` response; RFC 9207 `iss` (required when the provider advertises
    /// it, checked whenever present); then `code`.
    public func authorizationCode(from redirect: URL, expectedIssuer: String, issuerParameterRequired: Bool) throws -> String {
        guard let components = URLComponents(url: redirect, resolvingAgainstBaseURL: false),
              let expected = URLComponents(url: redirectURI, resolvingAgainstBaseURL: false),
              components.scheme?.lowercased() == expected.scheme?.lowercased(),
              components.host?.lowercased() == expected.host?.lowercased(),
              components.port == expected.port || expected.port == nil && LoopbackRedirect.isLoopback(expected),
              components.path == expected.path
        else {
            throw OAuthError.redirectURIMismatch(reason: "the redirect is not for \(redirectURI.absoluteString)")
        }
        var parameters: [String: String] = [:]
        for item in components.queryItems ?? [] {
            guard parameters[item.name] == nil else {
                throw OAuthError.malformedResponse(reason: "the redirect repeats the parameter \(item.name)")
            }
            parameters[item.name] = item.value ?? ""
        }
        let response = AuthorizationResponseParameters(form: parameters)
        guard let returnedState = response.state, ConstantTime.isEqual(Data(returnedState.utf8), Data(state.utf8)) else {
            throw OAuthError.stateMismatch(reason: "the redirect's state does not match the request (possible CSRF); nothing in it is trusted")
        }
        if let error = response.error {
            throw OAuthError.authorizationError(reason: "the provider refused the authorization request",
                providerError: .init(error: error, description: response.errorDescription, uri: response.errorURI)
            )
        }
        if let issuer = response.issuer {
            guard issuer == expectedIssuer else {
                throw OAuthError.issuerMismatch(reason: "the redirect came from issuer \(issuer), not \(expectedIssuer) (RFC 9207 mix-up defence)")
            }
        } else if issuerParameterRequired {
            throw OAuthError.issuerMismatch(reason: "the provider promises an iss parameter (RFC 9207) but the redirect has none")
        }
        guard let code = response.code, !code.isEmpty else {
            throw OAuthError.missingCode(reason: "the redirect carries no authorization code")
        }
        return code
    }
}
