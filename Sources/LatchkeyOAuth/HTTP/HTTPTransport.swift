#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import LatchkeyCrypto

/// One HTTP request, as the OAuth client makes it.
public struct TransportRequest: Sendable {
    public var method: String
    public var url: URL
    public var headers: [String: String]
    public var body: Data?

    public init(method: String, url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// One HTTP response.
public struct TransportResponse: Sendable {
    public var status: Int
    /// Header names lowercased.
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }
}

/// How the OAuth client talks to a provider. Latchkey ships ``HTTP1Transport``;
/// an application may supply its own (a proxy, a pinned TLS stack), but every
/// implementation must honour the rules ``TransportPolicy`` states.
public protocol HTTPTransport: Sendable {
    func send(_ request: TransportRequest) async throws -> TransportResponse
}

/// Rules every request follows, checked before anything is sent.
public struct TransportPolicy: Sendable {
    /// Largest response body accepted.
    public var maximumResponseSize = 1 << 20
    /// Time allowed for one request.
    public var timeout: TimeInterval = 30
    /// Whether 3xx responses are followed. Off: OAuth endpoints do not redirect, and
    /// following a redirect could carry a code or token to another host.
    public var followsRedirects = false
    /// Whether only public addresses are connected to (``IPAddressScope``): for a server
    /// fetching a URL a stranger named, so the fetch cannot reach the server's own host or
    /// network (SSRF). Every address the name resolves to is checked as it is connected
    /// to. Off by default: a client talks to the provider it was configured with, wherever
    /// that is.
    public var publicAddressesOnly = false

    public init() {}

    /// https, or http only for loopback hosts (RFC 8252 §8.3; RFC 6749 §3.1 and §3.2 require TLS).
    public static func check(_ url: URL) throws {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else {
            throw OAuthError.insecureTransport(reason: "\(url.absoluteString) is not an absolute URL")
        }
        switch scheme {
        case "https": return
        case "http" where LoopbackHost.contains(host): return
        default:
            throw OAuthError.insecureTransport(reason: "\(scheme)://\(host) is refused: use https (plain http only for loopback hosts)")
        }
    }

}
