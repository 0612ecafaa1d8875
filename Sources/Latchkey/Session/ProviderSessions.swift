#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
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

    /// The link's parts and a conversation with its provider, once the link is of the
    /// right kind and its provider allowed; nothing is sent before both checks pass.
    func conversation(following url: URL, as kind: ProviderLink.Kind, flow: FlowContext) throws -> (ProviderLink, ProviderConversation) {
        guard let link = try ProviderLink.parse(url, as: kind) else {
            throw switch kind {
            case .bind:
                LatchkeyError.notABindURL(reason: "this is not a bind URL (expected https://<provider>/v1/bind/<job>?token=… or <scheme>://bind?api_base_url=…&job_id=…&token=…)"
                )
            case .authenticate:
                LatchkeyError.notAnAuthenticateURL(reason: "this is not an authenticate URL (expected https://<provider>/v1/authenticate/<session> or <scheme>://authenticate?api_base_url=…&session_id=…)"
                )
            }
        }
        try allowedDomains.check(link.provider)
        return (link, ProviderConversation(flow: flow, provider: link.provider, transport: transport))
    }
}
