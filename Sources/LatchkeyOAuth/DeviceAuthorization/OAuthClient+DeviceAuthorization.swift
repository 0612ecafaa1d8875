#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension OAuthClient {
    /// Starts the device authorization grant (RFC 8628 §3.1) at the provider's
    /// `device_authorization_endpoint`: a public client names itself, a client with a
    /// key authenticates as at the token endpoint. `authorizationDetails`, when given, is
    /// the RFC 9396 `authorization_details` parameter (a JSON array).
    public func deviceAuthorization(scopes: [String] = [OAuthScope.openID], authorizationDetails: String? = nil) async throws -> DeviceAuthorizationResponse {
        let metadata = try await metadata()
        guard let endpoint = metadata.deviceAuthorizationEndpoint else {
            throw OAuthError.endpointMissing(reason: "the provider's discovery document names no device_authorization_endpoint (RFC 8628 §4)")
        }
        let request = DeviceAuthorizationRequest(
            clientID: publicClientID, scope: scopes.isEmpty ? nil : scopes.joined(separator: " "), authorizationDetails: authorizationDetails
        )
        let response = try await send(try formRequest(endpoint, request))
        guard response.status == 200 else { throw try Self.providerError(response, what: "device authorization") }
        return try DeviceAuthorizationResponse.parse(response.body)
    }

    /// What one poll of the token endpoint gave (RFC 8628 §3.4, §3.5).
    public enum DeviceTokenPoll: Sendable {
        case tokens(TokenSet)
        case pending
        case slowDown
    }

    /// Polls the token endpoint once with the device code (RFC 8628 §3.4).
    /// `authorization_pending` and `slow_down` are answers, not errors; `access_denied`
    /// and `expired_token` throw ``OAuthError/Code/deviceAccessDenied`` and
    /// ``OAuthError/Code/deviceCodeExpired``. An ID token is validated as everywhere, but
    /// with no nonce: the device grant has no authorization request to carry one.
    public func pollDeviceToken(_ authorization: DeviceAuthorizationResponse, dpop: DPoPSigner? = nil) async throws -> DeviceTokenPoll {
        let metadata = try await metadata()
        let request = TokenRequest(grantType: .deviceCode, clientID: publicClientID, deviceCode: authorization.deviceCode)
        var tokens: TokenSet
        do {
            tokens = try await tokenRequest(metadata.tokenEndpoint, request, dpop: dpop)
        } catch let error as OAuthError where error.providerError != nil {
            switch error.providerError?.error {
            case .authorizationPending?: return .pending
            case .slowDown?: return .slowDown
            case .accessDenied?:
                throw OAuthError.deviceAccessDenied(reason: "the sign-in was denied on the approving device", providerError: error.providerError, underlying: error)
            case .expiredToken?:
                throw OAuthError.deviceCodeExpired(reason: "the device code expired before anyone approved it; start again", providerError: error.providerError, underlying: error)
            default:
                throw error
            }
        }
        if let idToken = tokens.idToken {
            tokens.idTokenClaims = try await validateIDToken(idToken, expectations: .init(nonce: nil, accessToken: tokens.accessToken))
        }
        return .tokens(tokens)
    }

    /// Polls until the person decides or the code expires (RFC 8628 §3.4–§3.5), waiting
    /// with ``DevicePolling``; `progress` hears each `pending` and `slow_down`. The wait
    /// honours task cancellation.
    public func deviceTokens(
        for authorization: DeviceAuthorizationResponse, issuedAt: Date, dpop: DPoPSigner? = nil,
        progress: @Sendable (DevicePolling.Outcome, DevicePolling) -> Void = { _, _ in }
    ) async throws -> TokenSet {
        var polling = DevicePolling(authorization, issuedAt: issuedAt)
        var next = polling.nextPoll(after: issuedAt)
        while let when = next {
            let wait = when.timeIntervalSinceNow
            if wait > 0 { try await Task.sleep(for: .milliseconds(Int(wait * 1000))) }
            let outcome: DevicePolling.Outcome
            switch try await pollDeviceToken(authorization, dpop: dpop) {
            case .tokens(let tokens): return tokens
            case .pending: outcome = .pending
            case .slowDown: outcome = .slowDown
            }
            polling.record(outcome)
            progress(outcome, polling)
            next = polling.nextPoll(after: Date())
        }
        throw OAuthError.deviceCodeExpired(reason: "the device code expired before anyone approved it; start again")
    }
}
