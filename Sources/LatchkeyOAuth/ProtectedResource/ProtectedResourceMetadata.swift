#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// OAuth 2.0 Protected Resource Metadata (RFC 9728 §2): what a protected resource (an
/// MCP server, say) says about itself, above all which authorization servers issue its
/// tokens. A client learns where it is from a 401's `resource_metadata`
/// (``AuthenticationChallenge/resourceMetadata``, §5.1) or from the well-known URL
/// (``wellKnownURL(for:)``, §3.1).
///
/// The document is the resource's word, so it is checked before anything is believed
/// (§3.3, §7.3): its `resource` must be the resource the client is calling
/// (``covers(_:)``), and the authorization servers it names are only candidates: a
/// client signs in only at one the user allowed (§7.6, "the client … should not trust
/// an authorization server just because the resource names it").
public struct ProtectedResourceMetadata: Hashable, Sendable {
    /// §2 `resource`: the resource identifier, in ``ResourceIndicator`` form.
    public let resource: ResourceIndicator
    /// §2 `authorization_servers`: issuer identifiers (RFC 8414 §2), as written.
    public let authorizationServers: [String]
    /// §2 `scopes_supported`.
    public let scopesSupported: [String]?
    /// §2 `bearer_methods_supported`: `header`, `body`, `query`.
    public let bearerMethodsSupported: [String]?
    /// §2 `resource_name`: for people; shown only as a stranger's text.
    public let resourceName: String?

    /// The largest document read.
    public static let maximumSize = 64 * 1024
    /// The most authorization servers and scopes read.
    public static let maximumEntries = 32

    /// The well-known name (§3, the IANA registration in §8.2).
    public static let wellKnownSegment = "/.well-known/oauth-protected-resource"

    public init(resource: ResourceIndicator, authorizationServers: [String], scopesSupported: [String]? = nil, bearerMethodsSupported: [String]? = nil, resourceName: String? = nil) {
        self.resource = resource
        self.authorizationServers = authorizationServers
        self.scopesSupported = scopesSupported
        self.bearerMethodsSupported = bearerMethodsSupported
        self.resourceName = resourceName
    }

    /// §3.1: the metadata URL of `resource`, the well-known segment between its host and
    /// its path (`https://r.example/mcp` → `https://r.example/.well-known/oauth-protected-resource/mcp`).
    public static func wellKnownURL(for resource: ResourceIndicator) -> URL? {
        guard let separator = resource.uri.firstRange(of: "://") else { return nil }
        let rest = resource.uri[separator.upperBound...]
        let pathStart = rest.firstIndex(of: "/") ?? rest.endIndex
        return URL(string: resource.uri[..<separator.upperBound] + rest[..<pathStart] + wellKnownSegment + rest[pathStart...])
    }

    /// Whether a request for `url` is a request to this resource (§3.3, §7.3): the same
    /// origin, and a path that is the resource's path or lies below it, segment by
    /// segment (`/mcp` covers `/mcp` and `/mcp/tools`, never `/mcpx`). A token for this
    /// resource goes only to URLs it covers.
    public func covers(_ url: URL) -> Bool {
        guard let requested = try? ResourceIndicator(Self.withoutQuery(url)) else { return false }
        let own = resource.uri
        guard requested.uri.hasPrefix(own) else { return false }
        let rest = requested.uri.dropFirst(own.count)
        return rest.isEmpty || rest.hasPrefix("/") || own.hasSuffix("/")
    }

    /// `url`'s scheme, authority and path: what identifies a resource (RFC 8707 §2).
    private static func withoutQuery(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        components.query = nil
        components.fragment = nil
        return components.string ?? url.absoluteString
    }

    /// Reads the document fetched for a request to `requested`, checking it (§3.2, §3.3):
    /// JSON of at most ``maximumSize`` bytes, a `resource` that is a resource indicator and
    /// covers `requested`, and authorization servers that are https URLs (http only on a
    /// loopback host, ``TransportPolicy/check(_:)``).
    public static func parse(_ data: Data, for requested: URL) throws -> ProtectedResourceMetadata {
        guard data.count <= maximumSize else {
            throw OAuthError.responseTooLarge(reason: "the protected resource metadata is over \(maximumSize / 1024) KiB")
        }
        let document: Document
        do {
            document = try JSONDecoder().decode(Document.self, from: data)
        } catch {
            throw OAuthError.malformedResponse(reason: "the protected resource metadata is not JSON with a resource (RFC 9728 §2)", underlying: error)
        }
        let resource: ResourceIndicator
        do {
            resource = try ResourceIndicator(document.resource)
        } catch {
            throw OAuthError.resourceMetadataMismatch(reason: "the protected resource metadata's resource: \(error)")
        }
        let servers = document.authorizationServers ?? []
        guard servers.count <= maximumEntries, (document.scopesSupported?.count ?? 0) <= maximumEntries,
              (document.bearerMethodsSupported?.count ?? 0) <= maximumEntries
        else {
            throw OAuthError.malformedResponse(reason: "the protected resource metadata lists more than \(maximumEntries) entries")
        }
        for server in servers {
            guard server.utf8.count <= 512, let url = URL(string: server), url.query == nil, url.fragment == nil else {
                throw OAuthError.malformedResponse(reason: "the protected resource metadata names an authorization server that is not an issuer URL")
            }
            try TransportPolicy.check(url)
        }
        for scope in document.scopesSupported ?? [] where scope.isEmpty || scope.utf8.count > 256 || scope.contains(" ") {
            throw OAuthError.malformedResponse(reason: "the protected resource metadata lists a scope that is not one (RFC 6749 §3.3)")
        }
        let metadata = ProtectedResourceMetadata(
            resource: resource, authorizationServers: servers, scopesSupported: document.scopesSupported,
            bearerMethodsSupported: document.bearerMethodsSupported, resourceName: document.resourceName.map { String($0.prefix(256)) }
        )
        guard metadata.covers(requested) else {
            throw OAuthError.resourceMetadataMismatch(
                reason: "the protected resource metadata is for \(resource.uri), not for the URL that pointed to it (RFC 9728 §3.3); no token was asked for"
            )
        }
        return metadata
    }

    /// The members read (§2); others are ignored, as §2 asks.
    private struct Document: Decodable {
        var resource: String
        var authorizationServers: [String]?
        var scopesSupported: [String]?
        var bearerMethodsSupported: [String]?
        var resourceName: String?

        enum CodingKeys: String, CodingKey {
            case resource
            case authorizationServers = "authorization_servers"
            case scopesSupported = "scopes_supported"
            case bearerMethodsSupported = "bearer_methods_supported"
            case resourceName = "resource_name"
        }
    }
}
