#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyOAuth
import LatchkeyProtocol
import Logging

/// Calling a protected resource that names its authorization servers (RFC 9728), as an
/// MCP client does (MCP authorization spec, "Authorization Server Discovery"): the
/// request is sent; a 401 whose challenge names `resource_metadata` (§5.1) leads to the
/// resource's metadata, checked (§3.3); the first authorization server it names that the
/// user allowed is signed in at, for a token of that resource alone (RFC 8707); and the
/// request is sent again with it, once.
struct ProtectedResourceService: EmbeddedService {
    let core: EmbeddedCore
}

extension ProtectedResourceService {
    /// The work of `Embedded.send(_:to:)`, which documents it.
    func send(_ request: TransportRequest, access: ProtectedResourceAccess) async throws -> ProtectedResourceResponse {
        let flow = flow("protectedResource")
        return try await flow.run {
            try TransportPolicy.check(request.url)
            guard let origin = WebOrigin(request.url) else { throw LatchkeyError.invalidArgument(reason: "\(request.url.absoluteString.logSafe(maximumLength: 160)) has no origin") }
            let carrier = access.transport ?? transport
            let first = try await carrier.send(request)
            guard first.status == 401, let challenge = Self.challenge(first) else {
                return ProtectedResourceResponse(response: first, tokens: nil, metadata: nil)
            }
            let metadata = try await self.metadata(at: challenge.location, for: request.url, origin: origin, through: carrier)
            let issuer = try Self.provider(for: metadata, allowed: access.allowedProviders)
            flow.logger.debug("protected resource names an allowed provider", metadata: ["resource": .string(metadata.resource.uri), "provider": .string(issuer.absoluteString)])
            let scopes = challenge.scopes ?? access.scopes
            let ask: (Tokens?) async throws -> Tokens = { rejected in
                try await tokenCache.validTokens(
                    issuer: issuer, clientID: access.clientID, redirectURI: access.redirectURI, scopes: scopes, credential: access.credential,
                    proofOfPossession: access.proofOfPossession, rejected: rejected, resource: metadata.resource.uri
                )
            }
            // The token goes to this origin alone, and only for URLs the metadata covers.
            let present: (Tokens) async throws -> TransportResponse = { tokens in
                try await AccessTokenTransport(inner: carrier, accessToken: tokens.accessToken, dpop: tokens.dpop, allowedOrigins: [origin]).send(request)
            }
            var tokens = try await ask(nil)
            var response = try await present(tokens)
            // Kept tokens refused although unexpired (revoked at the provider): once more
            // with refreshed or new ones (RFC 6750 §3.1), never a third time.
            if AuthenticationChallenge.refusesToken(response) {
                tokens = try await ask(tokens)
                response = try await present(tokens)
            }
            return ProtectedResourceResponse(response: response, tokens: tokens, metadata: metadata)
        }
    }

    /// What a 401 asks for: where the resource's metadata is (RFC 9728 §5.1), the scopes
    /// it wants (RFC 6750 §3) and its error. Nil when no Bearer or DPoP challenge names
    /// `resource_metadata`.
    private static func challenge(_ response: TransportResponse) -> (location: String, scopes: [String]?, error: String?)? {
        guard let header = response.headers["www-authenticate"] else { return nil }
        let schemes = [AccessTokenType.bearer, .dpop].map { $0.rawValue.lowercased() }
        for challenge in AuthenticationChallenge.parse(header) where schemes.contains(challenge.scheme) {
            guard let location = challenge.resourceMetadata else { continue }
            let scopes = challenge.scope.map { $0.split(separator: " ").map(String.init) }.flatMap { scopes in
                scopes.isEmpty || scopes.count > 32 || scopes.contains(where: { $0.utf8.count > 256 }) ? nil : scopes
            }
            return (location, scopes, challenge.error)
        }
        return nil
    }

    /// The resource's metadata from `location`: on the resource's own origin (a stranger's
    /// 401 does not send this client anywhere else), no redirect followed, 200 only, and
    /// describing the resource that was called (``ProtectedResourceMetadata/parse(_:for:)``).
    private func metadata(at location: String, for requested: URL, origin: WebOrigin, through carrier: any HTTPTransport) async throws -> ProtectedResourceMetadata {
        guard location.utf8.count <= 2048, let url = URL(string: location), url.fragment == nil else {
            throw OAuthError.resourceMetadataMismatch(reason: "the resource's resource_metadata is not a URL")
        }
        try TransportPolicy.check(url)
        guard WebOrigin(url) == origin else {
            throw OAuthError.resourceMetadataMismatch(
                reason: "the resource at \(origin) points to metadata on \(WebOrigin(url)?.description ?? "another origin"); only its own origin's is read"
            )
        }
        let response = try await carrier.send(TransportRequest(method: HTTPMethod.get, url: url, headers: ["Accept": ProtocolPath.jsonMediaType]))
        guard response.status == 200 else {
            throw OAuthError.unexpectedStatus(reason: "the protected resource metadata at \(url.absoluteString.logSafe(maximumLength: 160)) answered HTTP \(response.status)")
        }
        return try ProtectedResourceMetadata.parse(response.body, for: requested)
    }

    /// The first authorization server the metadata names that the user allowed, as the
    /// user wrote it; compared in ``ProviderAddress`` form (scheme and host lower-case,
    /// no trailing slash).
    private static func provider(for metadata: ProtectedResourceMetadata, allowed: [URL]) throws -> URL {
        let allowedAddresses = allowed.compactMap { url in (try? ProviderAddress(url)).map { (url, $0.base) } }
        for server in metadata.authorizationServers {
            guard let url = URL(string: server), let address = try? ProviderAddress(url) else { continue }
            if let match = allowedAddresses.first(where: { $0.1 == address.base }) { return match.0 }
        }
        let named = metadata.authorizationServers.prefix(4).map { $0.displaySafe(maximumLength: 120) }.joined(separator: ", ")
        throw OAuthError.providerNotAllowed(
            reason: """
                \(metadata.resource.uri.displaySafe(maximumLength: 160)) takes tokens from \(named.isEmpty ? "no authorization server" : named), \
                none of which is allowed; nothing was sent to them (allow a provider only if you trust it with your sign-in)
                """
        )
    }
}
