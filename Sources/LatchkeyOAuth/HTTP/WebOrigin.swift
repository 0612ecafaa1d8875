#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import LatchkeyCrypto

/// A web origin (RFC 6454 §4): scheme, host and port, the unit an access token is sent
/// to and the unit discovery's endpoints must share with the issuer
/// (``ProviderMetadata``). ``AccessTokenTransport`` presents a token only to the origins it was given
/// (docs/SECURITY.md, "Where tokens go"): a bearer token is good wherever it is shown,
/// so a URL that names another server must not receive it.
public struct WebOrigin: Hashable, Sendable, CustomStringConvertible {
    /// `https` or `http`, lower case.
    public let scheme: String
    /// The host as the URL has it, lower case, without brackets around IPv6 or a trailing
    /// dot (`https://ID.example.:443/` and `https://id.example` are one origin).
    public let host: String
    /// The port, the scheme's default when the URL names none.
    public let port: Int

    /// The origin of an `http` or `https` URL with a host; nil for anything else.
    public init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
              let host = url.host?.lowercased(), !host.isEmpty
        else { return nil }
        self.scheme = scheme
        var bare = host.trimmingScalars(where: { $0 == "[" || $0 == "]" })
        while bare.hasSuffix(".") { bare.removeLast() }
        guard !bare.isEmpty else { return nil }
        self.host = bare
        port = url.port ?? (scheme == "https" ? 443 : 80)
    }

    /// An origin as a person writes one, `https://api.example.com[:port]` (a trailing `/`
    /// allowed), and nothing else: no user, path, query or fragment, which would suggest
    /// a narrower grant than an origin is. `http` only for a loopback host
    /// (``TransportPolicy``), since the token would cross the network in clear.
    public init(parsing text: String) throws {
        guard text.utf8.count <= 2048, let components = URLComponents(string: text), let url = components.url,
              components.user == nil, components.password == nil, components.path.isEmpty || components.path == "/",
              components.query == nil, components.fragment == nil, let origin = WebOrigin(url)
        else {
            throw OAuthError.invalidOrigin(reason: "\(text.prefix(256)) is not an origin (https://host[:port])")
        }
        try TransportPolicy.check(url)
        self = origin
    }

    /// `scheme://host[:port]`, the port only when it is not the scheme's default.
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let defaultPort = scheme == "https" ? 443 : 80
        return port == defaultPort ? "\(scheme)://\(shownHost)" : "\(scheme)://\(shownHost):\(port)"
    }
}
