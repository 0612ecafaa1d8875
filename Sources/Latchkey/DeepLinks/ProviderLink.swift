#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyProtocol

/// A bind or authenticate link, in either of its two forms (docs/PROTOCOL.md sections 2
/// and 3):
///
/// - `https://<idp>[/<prefix>]/v1/<kind>/<id>[?token=<t>]`, the provider's own URL;
/// - `<scheme>://<kind>?api_base_url=<idp>&<id-name>=<id>[&token=<t>]`, the deep link an
///   app registers for (`<kind>` is `bind` with `job_id`, or `authenticate` with
///   `session_id`).
///
/// Parsing is strict: one value per parameter, identifiers and tokens from the URL-safe
/// alphabet and bounded in length, no user info, https (or http on loopback) only.
struct ProviderLink: Sendable {
    enum Kind: String, Sendable {
        case bind
        case authenticate

        var identifierName: String { self == .bind ? "job_id" : "session_id" }
    }

    let kind: Kind
    let provider: ProviderAddress
    let identifier: String
    let token: String?

    /// The provider URL the link stands for (`…/v1/<kind>/<id>?token=…`).
    var endpoint: URL {
        get throws {
            var components = URLComponents(url: provider.url("v1/\(kind.rawValue)/\(identifier)"), resolvingAgainstBaseURL: false)
            if let token { components?.queryItems = [URLQueryItem(name: ProtocolPath.tokenParameter, value: token)] }
            guard let url = components?.url else {
                throw LatchkeyError.invalidArgument(reason: "cannot build the \(kind.rawValue) URL")
            }
            return url
        }
    }

    static let maximumIdentifierLength = 256
    /// A sign-in session id may be longer: the reference provider seals the session into
    /// it instead of storing it (docs/SECURITY.md, "Limits").
    static let maximumSessionLength = 12 * 1024

    /// Parses `url` as a link of `kind`; nil when it is not one (the domain is not checked
    /// here). A link of the right shape with a provider URL that cannot be used throws.
    static func parse(_ url: URL, as kind: Kind) throws -> ProviderLink? {
        guard url.absoluteString.utf8.count <= ProviderAddress.maximumURLLength,
              let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let scheme = components.scheme?.lowercased(),
              components.user == nil, components.password == nil, components.fragment == nil
        else { return nil }
        guard let query = uniqueQuery(components) else { return nil }

        if scheme == "https" || scheme == "http" {
            let parts = components.path.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count >= 4, parts[parts.count - 3] == "v1", parts[parts.count - 2] == Substring(kind.rawValue),
                  isSafe(String(parts[parts.count - 1]), for: kind)
            else { return nil }
            let token = query[ProtocolPath.tokenParameter]
            guard kind == .authenticate || token.map(isSafe) == true, Set(query.keys).isSubset(of: [ProtocolPath.tokenParameter]) else { return nil }
            var base = components
            base.path = parts.dropLast(3).joined(separator: "/")
            base.query = nil
            guard let baseURL = base.url else { return nil }
            return ProviderLink(kind: kind, provider: try ProviderAddress(baseURL), identifier: String(parts[parts.count - 1]), token: token)
        }

        // A deep link: any custom scheme, host naming the kind, parameters in the query.
        guard components.host?.lowercased() == kind.rawValue, components.path.isEmpty || components.path == "/",
              let baseText = query["api_base_url"], let base = URL(string: baseText),
              let identifier = query[kind.identifierName], isSafe(identifier, for: kind)
        else { return nil }
        let token = query[ProtocolPath.tokenParameter]
        if kind == .bind, token.map(isSafe) != true { return nil }
        if let token, !isSafe(token) { return nil }
        return ProviderLink(kind: kind, provider: try ProviderAddress(base), identifier: identifier, token: token)
    }

    /// Query parameters, or nil when one appears twice or has no value (an ambiguous link
    /// is refused rather than read one way here and another way at the provider).
    static func uniqueQuery(_ components: URLComponents) -> [String: String]? {
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] {
            guard query[item.name] == nil, let value = item.value else { return nil }
            query[item.name] = value
        }
        return query
    }

    /// Job ids, session ids and tokens: 1 to 256 characters of the URL-safe alphabet
    /// (RFC 3986 §2.3 unreserved).
    static func isSafe(_ text: String) -> Bool {
        ProtocolIdentifier.isValid(text, maximumLength: maximumIdentifierLength)
    }

    /// A link's identifier: a session id up to ``maximumSessionLength``, others as ``isSafe(_:)``.
    static func isSafe(_ text: String, for kind: Kind) -> Bool {
        ProtocolIdentifier.isValid(text, maximumLength: kind == .authenticate ? maximumSessionLength : maximumIdentifierLength)
    }
}
