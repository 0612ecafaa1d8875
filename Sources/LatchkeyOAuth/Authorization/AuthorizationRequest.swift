public import Foundation
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

    /// Builds the request URL on `authorizationEndpoint`.
    public init(
        authorizationEndpoint: URL,
        clientID: String,
        redirectURI: URL,
        scopes: [String],
        maxAge: TimeInterval? = nil,
        additionalParameters: [String: String] = [:]
    ) throws {
        try TransportPolicy.check(authorizationEndpoint)
        let state = Base64URL.encode(try SecureRandom.bytes(count: 32))
        let nonce = Base64URL.encode(try SecureRandom.bytes(count: 32))
        let pkce = try PKCE.generate()
        guard var components = URLComponents(url: authorizationEndpoint, resolvingAgainstBaseURL: false) else {
            throw OAuthError(code: .malformedResponse, reason: "the authorization endpoint is not a URL")
        }
        var items = components.queryItems ?? []
        let reserved: Set<String> = ["response_type", "client_id", "redirect_uri", "scope", "state", "nonce", "code_challenge", "code_challenge_method"]
        items += [
            URLQueryItem(name: "response_type", value: "code"),
            URLQueryItem(name: "client_id", value: clientID),
            URLQueryItem(name: "redirect_uri", value: redirectURI.absoluteString),
            URLQueryItem(name: "scope", value: scopes.joined(separator: " ")),
            URLQueryItem(name: "state", value: state),
            URLQueryItem(name: "nonce", value: nonce),
            URLQueryItem(name: "code_challenge", value: pkce.challenge),
            URLQueryItem(name: "code_challenge_method", value: pkce.method),
        ]
        if let maxAge { items.append(URLQueryItem(name: "max_age", value: String(Int(maxAge)))) }
        for (name, value) in additionalParameters.sorted(by: { $0.key < $1.key }) where !reserved.contains(name) {
            items.append(URLQueryItem(name: name, value: value))
        }
        components.queryItems = items
        // URLComponents leaves '+' alone in queries; a literal '+' would read as a space.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        guard let url = components.url else { throw OAuthError(code: .malformedResponse, reason: "cannot build the authorization URL") }
        self.url = url
        self.redirectURI = redirectURI
        self.state = state
        self.nonce = nonce
        self.pkce = pkce
        self.scopes = scopes
        self.maxAge = maxAge
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
              components.port == expected.port || expected.port == nil && ["127.0.0.1", "::1", "localhost"].contains(expected.host ?? ""),
              components.path == expected.path
        else {
            throw OAuthError(code: .redirectURIMismatch, reason: "the redirect is not for \(redirectURI.absoluteString)")
        }
        var parameters: [String: String] = [:]
        for item in components.queryItems ?? [] {
            guard parameters[item.name] == nil else {
                throw OAuthError(code: .malformedResponse, reason: "the redirect repeats the parameter \(item.name)")
            }
            parameters[item.name] = item.value ?? ""
        }
        guard let returnedState = parameters["state"], ConstantTime.isEqual(Data(returnedState.utf8), Data(state.utf8)) else {
            throw OAuthError(code: .stateMismatch, reason: "the redirect's state does not match the request (possible CSRF); nothing in it is trusted")
        }
        if let error = parameters["error"] {
            throw OAuthError(
                code: .authorizationError,
                reason: "the provider refused the authorization request",
                providerError: .init(error: OAuthErrorCode(rawValue: error), description: parameters["error_description"], uri: parameters["error_uri"])
            )
        }
        if let issuer = parameters["iss"] {
            guard issuer == expectedIssuer else {
                throw OAuthError(code: .issuerMismatch, reason: "the redirect came from issuer \(issuer), not \(expectedIssuer) (RFC 9207 mix-up defence)")
            }
        } else if issuerParameterRequired {
            throw OAuthError(code: .issuerMismatch, reason: "the provider promises an iss parameter (RFC 9207) but the redirect has none")
        }
        guard let code = parameters["code"], !code.isEmpty else {
            throw OAuthError(code: .missingCode, reason: "the redirect carries no authorization code")
        }
        return code
    }
}
