#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyOAuth

/// One client's conversation with one provider: what every flow at that provider, as that
/// client, starts from (docs/ARCHITECTURE.md, "The facade").
///
/// Made once per (issuer, client id, redirect URI) by ``ProviderSessions``: the issuer
/// is parsed and checked against the allowed domains once, the client id once, and the
/// ``OAuthClient`` it holds keeps the provider's discovery document and JWKS, fetched
/// once, and shares concurrent refreshes of one token. A flow takes the session; it never
/// re-derives any of it from the issuer's text.
struct ProviderSession: Sendable {
    /// The provider, parsed and allowed.
    let provider: ProviderAddress
    let clientID: String
    let redirectURI: URL
    /// The OAuth client for this provider and client (RFC 6749, RFC 7636, OIDC Core).
    let client: OAuthClient

    /// The issuer as the provider's discovery names it.
    var issuer: URL { client.configuration.issuer }

    /// A conversation with the provider for `flow`'s JSON exchanges (docs/PROTOCOL.md).
    func conversation(_ flow: FlowContext, transport: any HTTPTransport) -> ProviderConversation {
        ProviderConversation(flow: flow, provider: provider, transport: transport)
    }
}
