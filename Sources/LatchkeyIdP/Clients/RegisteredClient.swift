import Foundation
import LatchkeyOAuth
import LatchkeyProtocol

/// An OAuth client the provider knows (RFC 6749 §2): the built-in `latchkey-cli` (and
/// any other configured one), or one registered through the admin API and kept in the
/// store. A client with keys is confidential and authenticates with `private_key_jwt`
/// only (RFC 7523 §2.2, ``ClientAuthenticator``); one without is public.
struct RegisteredClient: Sendable {
    var id: String
    var name: String
    /// The client's JWK Set as registered, and parsed once for verification.
    var jwks: JWKSDocument?
    var keys: JWKSet?
    var grantTypes: [GrantType]
    var redirectURIs: [String]
    /// The most a client credentials token may carry; nil for a configured client, which
    /// gets the provider's supported scopes as before.
    var scopes: [String]?
    /// The resources (RFC 8707, canonical) it may ask tokens for; nil: any registered one.
    var resources: [String]?
    /// Random, new each time this id is registered (nil for a configured client): what
    /// the grants begun for this client carry, so that a client registered again under a
    /// deleted one's id is another client to them (docs/SECURITY.md, "Client keys").
    var registration: String?
    /// A client the provider did not register by hand (a client ID metadata document):
    /// it gets a consent page after the sign-in.
    var thirdParty = false

    var isConfidential: Bool { keys != nil }

    /// How a page names the client. A third-party client's name is its own text, so it
    /// never stands alone: the host its redirect URI returns to comes with it, which
    /// the client cannot choose freely (it must be in its document).
    func displayName(redirectURI: String?) -> String {
        guard thirdParty else { return name }
        let host = redirectURI.flatMap { URLComponents(string: $0)?.host } ?? "?"
        return "\(name) (returns to \(host))"
    }

    func allows(_ grant: GrantType) -> Bool { grantTypes.contains(grant) }

    /// A configured client: public, for the authorization code grant, refresh, and the
    /// device grant (RFC 8628; `latchkey login --device` with no client of its own).
    init(configured client: ProviderConfiguration.Client) {
        id = client.id
        name = client.id
        grantTypes = [.authorizationCode, .refreshToken, .deviceCode]
        redirectURIs = client.redirectURIs
    }

    /// A stored client; `jwks` is its JWK Set as stored, read once into both forms.
    init(
        id: String, name: String, jwks: Data?, grantTypes: [GrantType], redirectURIs: [String], scopes: [String]?, resources: [String]? = nil, registration: String?
    ) throws {
        self.id = id
        self.registration = registration
        self.name = name
        self.jwks = try jwks.map { try JSONDecoder().decode(JWKSDocument.self, from: $0) }
        self.keys = try jwks.map { try JWKSet(json: $0) }
        self.grantTypes = grantTypes
        self.redirectURIs = redirectURIs
        self.scopes = scopes
        self.resources = resources
    }

    /// The configured shape of this client, for the code flow's redirect checks.
    var configuration: ProviderConfiguration.Client {
        ProviderConfiguration.Client(id: id, redirectURIs: redirectURIs)
    }
}
