#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyOAuth
import LatchkeyProtocol

/// An identity provider as the facade addresses it: its base URL (the issuer, for the
/// reference provider), its WebAuthn origin, and the checks every URL it hands out must
/// pass.
struct ProviderAddress: Hashable, Sendable {
    /// The base URL without a trailing slash, e.g. `https://id.example.com/tenant`.
    let base: URL
    /// `scheme://host[:port]`, the origin the client data names (WebAuthn §5.8.1).
    let origin: String
    /// Lowercased host.
    let host: String

    /// The most characters a URL from outside may have: room for a provider's sealed flow
    /// ticket (a sign-in session carries the app's state and nonce), far below anything
    /// that costs memory.
    static let maximumURLLength = 16 * 1024

    init(_ url: URL) throws {
        guard url.absoluteString.utf8.count <= Self.maximumURLLength else {
            throw LatchkeyError.invalidArgument(reason: "the provider URL is over \(Self.maximumURLLength) characters")
        }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let scheme = components.scheme?.lowercased(), let host = components.host?.lowercased(), !host.isEmpty,
              components.user == nil, components.password == nil
        else {
            throw LatchkeyError.invalidArgument(reason: "\(url.absoluteString) is not an absolute http(s) URL of an identity provider")
        }
        do {
            try TransportPolicy.check(url)
        } catch {
            throw LatchkeyError.domainNotAllowed(reason: "\(scheme)://\(host) is refused: identity providers are reached over https (plain http only on loopback)",
                underlying: error
            )
        }
        guard Self.isPlainPath(components.percentEncodedPath) else {
            throw LatchkeyError.invalidArgument(reason: """
                \(url.absoluteString.logSafe(maximumLength: 160)) is refused: a provider's path may not hold dot segments, \
                percent-encoding or backslashes
                """)
        }
        components.scheme = scheme
        components.host = host
        components.query = nil
        components.fragment = nil
        while components.path.hasSuffix("/") { components.path.removeLast() }
        guard let base = components.url else {
            throw LatchkeyError.invalidArgument(reason: "\(url.absoluteString) is not a usable provider URL")
        }
        self.base = base
        self.host = host
        origin = Self.origin(scheme: scheme, host: host, port: components.port)
    }

    /// Whether a provider's path (as sent, percent-encoding kept) is one a server reads the
    /// same way as we compare it: no `.` or `..` segment (RFC 3986 §5.2.4 would remove
    /// them, so `/idp/../other` is `/other`), no percent-encoding (`%2e%2e` is a dot
    /// segment to a server that decodes first, `%252F` a slash to one that decodes twice),
    /// no backslash (a slash to some servers), and no empty segment inside. An allowed
    /// provider's path is then a plain prefix check (``DeepLink/isAllowed(by:)``), and a
    /// link cannot climb out of it. Provider paths in the wild are plain words.
    static func isPlainPath(_ path: String) -> Bool {
        guard !path.contains("%"), !path.contains("\\") else { return false }
        var segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        while segments.last == "" { segments.removeLast() }
        return segments.allSatisfy { $0 != "." && $0 != ".." && !$0.isEmpty }
    }

    /// `scheme://host[:port]` with the default port left out (RFC 6454 §6.1).
    private static func origin(scheme: String, host: String, port: Int?) -> String {
        let defaultPort = scheme == "https" ? 443 : 80
        return "\(scheme)://\(host.contains(":") ? "[\(host)]" : host)" + (port.map { $0 == defaultPort ? "" : ":\($0)" } ?? "")
    }

    /// The issuer identifier stored with a credential, compared as a string.
    var issuer: String { base.absoluteString }

    /// Whether `url` (a `submit` or `authenticateURL` the provider returned) is on this
    /// provider's origin. A provider may only send the client to itself: a hostile answer
    /// must not make the client post an assertion or a code elsewhere.
    ///
    /// The same parse as ``init(_:)`` up to the origin, without building a base URL: a
    /// URL on this origin has this provider's scheme and host, which passed the transport
    /// policy already. (Building a whole address was a measurable part of every request.)
    func owns(_ url: URL) -> Bool {
        guard url.absoluteString.utf8.count <= Self.maximumURLLength,
              let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let scheme = components.scheme?.lowercased(), let host = components.host?.lowercased(), !host.isEmpty,
              components.user == nil, components.password == nil
        else { return false }
        return Self.origin(scheme: scheme, host: host, port: components.port) == origin
    }

    /// `base` + `path` (no leading slash).
    func url(_ path: String) -> URL {
        base.appendingPathComponent(path)
    }
}
