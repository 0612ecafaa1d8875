#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyOAuth

/// One cached sign-in's tokens, as kept in the sealed metadata of the credential's DPoP
/// key record (``DPoPKeyRecord``): the vault encrypts and authenticates it like a key's
/// details (docs/SECURITY.md, "The vault"), so a copy of the vault without its key reveals
/// no token.
///
/// Keyed by issuer, client id and redirect URI; the credential is the record's. The ID
/// token's claims are kept as they were validated when the tokens arrived: an ID token is
/// not validated again when read back (it may have expired, as ID tokens soon do, while
/// the access token lives on).
struct CachedTokens: Codable, Sendable {
    /// ``ProviderAddress/issuer`` of the provider.
    var issuer: String
    var clientID: String
    var redirectURI: String
    /// The scopes the sign-in asked for: a later request for others signs in again.
    var scopes: [String]
    var accessToken: String
    var tokenType: String
    /// Seconds since 1970.
    var expiresAt: Double?
    /// Whether these tokens are bound to a DPoP key, as ``TokenSet/isDPoPBound`` decides.
    var isDPoPBound: Bool {
        TokenSet.isDPoPBound(tokenType: tokenType)
    }
    var refreshToken: String?
    var scope: String?
    var idToken: String?
    var claims: [String: JSONValue]?
    /// Seconds since 1970: the newest of several entries that fit is used.
    var storedAt: Double
    /// `client_credentials` for a client's own tokens (RFC 6749 §4.4), kept per scope set
    /// in its client key's record; nil for a person's sign-in.
    var grant: String?
    /// The protected resource the tokens are for (RFC 8707 §2); nil for the provider's
    /// own. Tokens for one resource never answer a request for another.
    var resource: String?

    /// The members' names, written out so `Codable` and the record's own reader and writer
    /// (`DPoPKeyRecord+JSON.swift`) share them: records written by either read back alike.
    enum CodingKeys: String, CodingKey {
        case issuer, clientID, redirectURI, scopes, accessToken, tokenType, expiresAt, refreshToken, scope, idToken, claims, storedAt, grant, resource
    }

    init(_ tokens: Tokens, issuer: String, scopes: [String]) {
        self.issuer = issuer
        clientID = tokens.clientID
        redirectURI = tokens.redirectURI.absoluteString
        self.scopes = scopes
        accessToken = tokens.accessToken
        tokenType = tokens.tokenType
        expiresAt = tokens.expiresAt?.timeIntervalSince1970
        refreshToken = tokens.refreshToken
        scope = tokens.tokenSet.scope
        idToken = tokens.idToken
        claims = tokens.claims?.all
        storedAt = Date().timeIntervalSince1970
        resource = tokens.resource
    }

    /// A client's own tokens (``grant`` `client_credentials`) for exactly `scopes`.
    init(clientCredentials tokens: Tokens, issuer: String, scopes: [String]) {
        self.init(tokens, issuer: issuer, scopes: Array(Set(scopes)).sorted())
        grant = GrantType.clientCredentials.rawValue
    }

    /// Whether this entry answers a request for `scopes` (and `resource`) from that client.
    func fits(issuer: String, clientID: String, redirectURI: URL, scopes requested: [String], resource: String? = nil) -> Bool {
        grant == nil && self.issuer == issuer && self.clientID == clientID && self.redirectURI == redirectURI.absoluteString
            && self.resource == resource && Set(requested).isSubset(of: Set(scopes))
    }

    /// A device sign-in's tokens (``grant`` the RFC 8628 grant type).
    init(deviceGrant tokens: Tokens, issuer: String, scopes: [String]) {
        self.init(tokens, issuer: issuer, scopes: scopes)
        grant = GrantType.deviceCode.rawValue
    }

    /// Whether this entry is a device sign-in at `issuer` for `clientID` covering `scopes`.
    func fits(deviceGrantOf issuer: String, clientID: String, scopes requested: [String]) -> Bool {
        grant == GrantType.deviceCode.rawValue && self.issuer == issuer && self.clientID == clientID && Set(requested).isSubset(of: Set(scopes))
    }

    /// Whether this entry is the client's own tokens for exactly `scopes` (a token for
    /// more scopes than asked is not handed to a caller that asked for fewer).
    func fits(clientCredentialsOf issuer: String, clientID: String, scopes requested: [String]) -> Bool {
        grant == GrantType.clientCredentials.rawValue && self.issuer == issuer && self.clientID == clientID && Set(requested) == Set(scopes)
    }

    /// Whether `other` is for the same issuer, client and redirect URI (and, for a
    /// client's own tokens, the same scopes), so it replaces this one.
    func sameClient(as other: CachedTokens) -> Bool {
        issuer == other.issuer && clientID == other.clientID && redirectURI == other.redirectURI && grant == other.grant && resource == other.resource
            && (grant != GrantType.clientCredentials.rawValue || Set(scopes) == Set(other.scopes))
    }

    /// The tokens again, presented through `dpop` when they are bound to it. Nil when the
    /// entry does not read back as tokens (then it is ignored, never trusted half-way).
    func tokens(issuerURL: URL, dpop: DPoPSigner?, credentialID: String?) -> Tokens? {
        guard let redirect = URL(string: redirectURI), !accessToken.isEmpty else { return nil }
        let validated = claims.flatMap { try? IDTokenClaims($0) }
        let set = TokenSet(
            accessToken: accessToken, tokenType: tokenType, expiresAt: expiresAt.map(Date.init(timeIntervalSince1970:)),
            refreshToken: refreshToken, scope: scope, idToken: idToken, idTokenClaims: validated
        )
        if set.isDPoPBound, dpop == nil { return nil }
        return Tokens(tokenSet: set, issuer: issuerURL, clientID: clientID, redirectURI: redirect, dpop: dpop, credentialID: credentialID, resource: resource)
    }
}
