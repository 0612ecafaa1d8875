#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto

/// A resource indicator (RFC 8707 §2): the URI of the protected resource a token is
/// asked for, so the token is audience-bound to it and refused everywhere else.
///
/// RFC 8707 asks for an absolute URI without a fragment and advises against a query;
/// this type refuses both, refuses user information (a name or password in a URI that
/// only identifies), and takes `https`, or `http` only on a loopback host (as RFC 8252
/// §8.3 does for redirects, for tests and local tools). The MCP authorization spec uses
/// the resource's canonical URI, so two spellings of one resource must compare equal:
/// the scheme and host are lower-cased and a default port dropped (RFC 3986 §6.2.2.1,
/// §6.2.3), and a path of only `/` is the empty path (the MCP spec's canonical form has
/// no trailing slash). Anything else is compared exactly.
public struct ResourceIndicator: Hashable, Sendable, CustomStringConvertible {
    /// The canonical form, as it is stored and compared.
    public let uri: String

    /// The longest indicator read, in bytes.
    public static let maximumLength = 512

    public var description: String { uri }

    /// Why a text is not a resource indicator.
    public enum Refusal: Error, Hashable, Sendable, CustomStringConvertible {
        case tooLong
        case notAbsolute
        case scheme
        case fragmentOrQuery
        case userInformation
        case characters

        public var description: String {
            switch self {
            case .tooLong: "a resource is at most \(ResourceIndicator.maximumLength) bytes"
            case .notAbsolute: "a resource must be an absolute URI with a host (RFC 8707 §2)"
            case .scheme: "a resource must be an https URI (http only on a loopback host)"
            case .fragmentOrQuery: "a resource must have no fragment and no query (RFC 8707 §2)"
            case .userInformation: "a resource must not carry a user name or password"
            case .characters: "a resource must be printable ASCII without spaces"
            }
        }
    }

    /// Reads `text` as a resource indicator; throws ``Refusal`` for anything else.
    public init(_ text: String) throws(Refusal) {
        guard text.utf8.count <= Self.maximumLength else { throw .tooLong }
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else { throw .characters }
        guard !text.contains("#"), !text.contains("?") else { throw .fragmentOrQuery }
        guard let separator = text.firstRange(of: "://") else { throw .notAbsolute }
        let scheme = text[..<separator.lowerBound].lowercased()
        let rest = text[separator.upperBound...]
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        var authority = rest[..<authorityEnd].lowercased()
        var path = String(rest[authorityEnd...])
        guard !authority.contains("@") else { throw .userInformation }
        guard let components = URLComponents(string: "\(scheme)://\(authority)\(path)"), let host = components.host, !host.isEmpty else {
            throw .notAbsolute
        }
        switch scheme {
        case "https":
            if authority.hasSuffix(":443") { authority.removeLast(4) }
        case "http":
            guard LoopbackHost.contains(host) else { throw .scheme }
            if authority.hasSuffix(":80") { authority.removeLast(3) }
        default:
            throw .scheme
        }
        if path == "/" { path = "" }
        uri = "\(scheme)://\(authority)\(path)"
    }
}
