import Foundation
import LatchkeyOAuth
import Synchronization

/// The provider sessions of one ``Embedded`` (``ProviderSession``), kept for its life, and
/// the one place where an issuer from outside becomes a ``ProviderAddress``: parsed, and
/// refused unless the allowed domains name it (docs/SECURITY.md, "Links and providers").
final class ProviderSessions: Sendable {
    let allowedDomains: AllowedDomains
    /// The app's transport under the request deadline; every provider call goes through it.
    let transport: DeadlineTransport
    private let sessions = Mutex<[String: ProviderSession]>([:])

    init(allowedDomains: AllowedDomains, transport: DeadlineTransport) {
        self.allowedDomains = allowedDomains
        self.transport = transport
    }

    /// `issuer` parsed and allowed; ``LatchkeyError/Code/invalidArgument`` or
    /// ``LatchkeyError/Code/domainNotAllowed`` otherwise, before any request.
    func provider(_ issuer: URL) throws -> ProviderAddress {
        let provider = try ProviderAddress(issuer)
        try allowedDomains.check(provider)
        return provider
    }

    /// The session for `clientID` and `redirectURI` at `issuer`.
    func session(issuer: URL, clientID: String, redirectURI: URL) throws -> ProviderSession {
        try session(provider(issuer), clientID: clientID, redirectURI: redirectURI)
    }

    /// The session for `clientID` and `redirectURI` at an allowed `provider`.
    func session(_ provider: ProviderAddress, clientID: String, redirectURI: URL) throws -> ProviderSession {
        guard !clientID.isEmpty, clientID.utf8.count <= 256 else {
            throw LatchkeyError.invalidArgument(reason: "the client id must be 1 to 256 characters")
        }
        let key = [provider.issuer, clientID, redirectURI.absoluteString].joined(separator: "\u{0}")
        return try sessions.withLock { sessions in
            if let existing = sessions[key] { return existing }
            let client = try makeClient(provider, clientID: clientID, redirectURI: redirectURI)
            let session = ProviderSession(provider: provider, clientID: clientID, redirectURI: redirectURI, client: client)
            sessions[key] = session
            return session
        }
    }

    /// A new OAuth client at an allowed `provider` that authenticates with
    /// `authentication`, for a flow that signs as a client key (the device grant's
    /// client); such a client is not kept, since its key may change.
    func makeClient(
        _ provider: ProviderAddress, clientID: String, redirectURI: URL, authentication: OAuthClient.ClientAuthentication = .none
    ) throws -> OAuthClient {
        var configuration = OAuthClient.Configuration(
            issuer: provider.base, clientID: clientID, redirectURI: redirectURI, authentication: authentication, transport: transport
        )
        // An endpoint off the issuer's origin only on https and inside the allowed
        // domains (docs/SECURITY.md, "Where the client sends what").
        let allowedDomains = allowedDomains
        configuration.allowsForeignEndpoint = { allowedDomains.allows($0.host ?? "") }
        return try OAuthClient(configuration: configuration)
    }
}
