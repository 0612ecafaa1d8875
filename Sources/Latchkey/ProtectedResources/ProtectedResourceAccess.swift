#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyOAuth

/// How ``Embedded/send(_:to:)`` may get a token for a protected resource that says where
/// its tokens come from (RFC 9728): which providers the user allows, and the client it
/// signs in as there.
public struct ProtectedResourceAccess: Sendable {
    /// The identity providers (issuer URLs) the user allows. A resource's metadata may
    /// name any; a token is asked only of one of these (RFC 9728 §7.6), and a resource
    /// that names none of them gets no sign-in and no token.
    public var allowedProviders: [URL]
    /// The client registered at those providers, and its redirect URI.
    public var clientID: String
    public var redirectURI: URL
    /// The scopes asked for when the resource's challenge names none (RFC 6750 §3 `scope`).
    public var scopes: [String]
    /// The ``Credential/id`` to sign in with; nil for the one that fits.
    public var credential: String?
    /// Bound tokens (RFC 9449) when the resource takes them.
    public var proofOfPossession: ProofOfPossession?
    /// What carries the requests to the resource and its metadata; nil for the
    /// configuration's transport.
    public var transport: (any HTTPTransport)?

    public init(
        allowedProviders: [URL], clientID: String, redirectURI: URL, scopes: [String] = [OAuthScope.openID], credential: String? = nil,
        proofOfPossession: ProofOfPossession? = nil, transport: (any HTTPTransport)? = nil
    ) {
        self.allowedProviders = allowedProviders
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scopes = scopes
        self.credential = credential
        self.proofOfPossession = proofOfPossession
        self.transport = transport
    }
}

/// What ``Embedded/send(_:to:)`` got: the resource's answer, and, when a token was
/// presented, the tokens and the metadata that led to them.
public struct ProtectedResourceResponse: Sendable {
    public let response: TransportResponse
    /// The tokens presented on the request that gave ``response``; nil when the resource
    /// answered without asking for one.
    public let tokens: Tokens?
    /// The resource's metadata (RFC 9728 §2), when it was read.
    public let metadata: ProtectedResourceMetadata?
}
