import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import Synchronization

/// Clients known by a URL (draft-ietf-oauth-client-id-metadata-document-03): the `client_id`
/// is an https URL whose JSON (``ClientMetadata``) describes the client, fetched
/// when the client is first met and kept for what its `Cache-Control` says, within the
/// ``ClientMetadataDocumentPolicy``'s bounds, per instance.
///
/// The fetch is a request a stranger chose, so it is made as hostile input is read
/// (§8.6, §8.7; docs/SECURITY.md, "Client ID metadata documents"):
/// - the URL must be https with a path, no query, fragment, user information or dot
///   segment, at most 256 bytes, on an allowed host when the operator listed some;
/// - only public addresses are connected to, checked on the address the connection is
///   made to, so a name that resolves to 127.0.0.1, 10.x, 169.254.169.254 or an IPv6
///   form of them is refused even if it resolved elsewhere a moment before;
/// - no redirect is followed (a 3xx is refused), nor any answer but 200;
/// - the body is capped (8 KiB) as it arrives and the whole exchange by one deadline
///   (5 s), so a slow or endless server costs a thread for 5 s at most;
/// - no cookies, no credentials; at most 16 fetches in flight per instance, more are
///   refused, not queued.
///
/// Each refusal is `invalid_client` with the reason, and is not cached: the next
/// request fetches again, within the request limits every endpoint has.
final class ClientMetadataDocuments: Sendable {
    let policy: ClientMetadataDocumentPolicy
    private struct Entry {
        var client: RegisteredClient
        var expiresAt: Date
    }
    private let cache = Mutex<[String: Entry]>([:])
    private let fetching = Mutex(0)

    /// The longest client ID URL taken.
    static let maximumURLLength = 256

    init(policy: ClientMetadataDocumentPolicy) {
        self.policy = policy
    }

    /// Whether `clientID` names a client by URL (and so is looked up here, not in the table).
    static func isURL(_ clientID: String) -> Bool {
        clientID.hasPrefix("https://") || clientID.hasPrefix("http://")
    }

    /// The client the document at `url` describes; `invalid_client` with the reason when
    /// documents are off, the URL or its document is refused, or the fetch fails.
    func client(_ url: String, now: Date = ProviderClock.now) async throws -> RegisteredClient {
        guard policy.enabled else {
            throw ProviderError.invalidClient("this provider does not take client ID metadata documents (serve --client-metadata-documents allow)")
        }
        if let entry = cache.withLock({ $0[url] }), entry.expiresAt > now {
            return entry.client
        }
        let location = try check(url)
        guard fetching.withLock({ count -> Bool in
            guard count < policy.maximumConcurrentFetches else { return false }
            count += 1
            return true
        }) else {
            throw ProviderError.temporarilyUnavailable("too many client metadata documents are being fetched; try again shortly")
        }
        defer { fetching.withLock { $0 -= 1 } }
        let (body, lifetime) = try await fetch(location, what: "the client metadata document")
        let document: ClientMetadata
        do {
            document = try ClientMetadata(document: body, fetchedFrom: url)
        } catch let refusal as ClientMetadata.Refusal {
            throw ProviderError.invalidClient("client metadata document: \(refusal.description)")
        }
        var jwks: Data?
        switch document.keyedBy {
        case .jwksURI(let keysURL)?:
            jwks = try await fetch(try check(keysURL.absoluteString, path: false), what: "the client's jwks_uri").body
        case .jwks(let inline)?:
            jwks = inline
        case nil:
            break
        }
        let client = try Self.client(document, jwks: jwks, host: location.host ?? url)
        if let lifetime {
            cache.withLock { cache in
                if cache.count >= policy.maximumCachedDocuments {
                    // The stale first, else the one closest to its end.
                    let stale = cache.filter { $0.value.expiresAt <= now }.map(\.key)
                    if stale.isEmpty, let oldest = cache.min(by: { $0.value.expiresAt < $1.value.expiresAt })?.key {
                        cache[oldest] = nil
                    } else {
                        stale.forEach { cache[$0] = nil }
                    }
                }
                cache[url] = Entry(client: client, expiresAt: now.addingTimeInterval(lifetime))
            }
        }
        return client
    }

    /// The document as a client: public, or keyed by its JWK Set
    /// (``ClientMetadata/publicKeySet(_:)``), marked third-party (it gets a consent page).
    private static func client(_ document: ClientMetadata, jwks: Data?, host: String) throws -> RegisteredClient {
        let keys = try jwks.map { jwks in
            guard let keys = ClientMetadata.publicKeySet(jwks) else {
                throw ProviderError.invalidClient("client metadata document: its JWK Set must hold 1 to \(ClientRegistry.maximumKeys) P-256 or Ed25519 public keys")
            }
            return keys
        }
        var client = try RegisteredClient(
            id: document.clientID ?? "", name: document.clientName ?? host, jwks: keys, grantTypes: document.grantTypes,
            redirectURIs: document.redirectURIs, scopes: nil, registration: nil
        )
        client.thirdParty = true
        return client
    }

    /// The URL as it may be fetched (§3): https (http on a loopback host only with
    /// ``ClientMetadataDocumentPolicy/localNetwork``), a host on the allow-list when there is
    /// one, and for a client ID a path, and no query, fragment, user information or dot segment.
    private func check(_ text: String, path: Bool = true) throws -> URL {
        func refuse(_ why: String) -> ProviderError { ProviderError.invalidClient("client metadata document URL: \(why)") }
        guard text.utf8.count <= Self.maximumURLLength, text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw refuse("at most \(Self.maximumURLLength) bytes of printable ASCII")
        }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(), let host = components.host?.lowercased(),
              !host.isEmpty, let url = components.url
        else { throw refuse("not an absolute URL") }
        switch scheme {
        case WebScheme.https: break
        case WebScheme.http where policy.localNetwork && LoopbackHost.contains(host): break
        default: throw refuse("https is required")
        }
        guard components.user == nil, components.password == nil else { throw refuse("no user name or password") }
        guard components.fragment == nil, components.query == nil, !text.contains("#"), !text.contains("?") else { throw refuse("no query or fragment") }
        let segments = components.percentEncodedPath.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        if path {
            guard segments.contains(where: { !$0.isEmpty }) else { throw refuse("a path is required") }
        }
        guard !segments.contains(where: { [".", ".."].contains($0.lowercased().replacingOccurrences(of: "%2e", with: ".")) }) else {
            throw refuse("no . or .. path segment")
        }
        if !policy.allowedHosts.isEmpty, !policy.allowedHosts.contains(host) {
            throw refuse("the host \(host) is not one this provider takes documents from")
        }
        return url
    }

    /// GET `url` under the fetch rules; the body, and how long it may be kept (nil: not at all).
    private func fetch(_ url: URL, what: String) async throws -> (body: Data, lifetime: TimeInterval?) {
        var rules = TransportPolicy()
        rules.maximumResponseSize = policy.maximumSize
        rules.timeout = policy.timeout
        rules.followsRedirects = false
        rules.publicAddressesOnly = !policy.localNetwork
        let response: TransportResponse
        do {
            response = try await HTTP1Transport(policy: rules).send(TransportRequest(method: HTTPMethod.get, url: url, headers: ["Accept": ProtocolPath.jsonMediaType]))
        } catch let error as OAuthError {
            switch error.code {
            case .responseTooLarge: throw ProviderError.invalidClient("\(what) is larger than \(policy.maximumSize) bytes")
            case .timedOut: throw ProviderError.invalidClient("\(what) took longer than \(Int(policy.timeout)) s to fetch")
            default: throw ProviderError.invalidClient("\(what) could not be fetched: \(error.reason)")
            }
        }
        if (300..<400).contains(response.status) {
            throw ProviderError.invalidClient("\(what) answered with a redirect; redirects are not followed")
        }
        guard response.status == 200 else { throw ProviderError.invalidClient("\(what) answered HTTP \(response.status), not 200") }
        return (response.body, lifetime(response.headers["cache-control"]))
    }

    /// RFC 9111 §5.2.2: `no-store` or `no-cache`, not kept; `max-age`, kept that long
    /// within the policy's bounds; nothing said, the policy's default.
    private func lifetime(_ header: String?) -> TimeInterval? {
        guard let header else { return policy.defaultCacheLifetime }
        let directives = header.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        if directives.contains("no-store") || directives.contains("no-cache") { return nil }
        guard let maxAge = directives.first(where: { $0.hasPrefix("max-age=") }).flatMap({ TimeInterval($0.dropFirst(8)) }), maxAge >= 0 else {
            return policy.defaultCacheLifetime
        }
        return min(max(maxAge, policy.minimumCacheLifetime), policy.maximumCacheLifetime)
    }
}
