import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol

/// The token endpoint (RFC 6749 §3.2, §4.1.3, §6), userinfo (OIDC Core §5.3) and
/// revocation (RFC 7009), over the grant families of ``GrantLedger``.
struct TokenEndpoint: Sendable {
    let context: ProviderContext
    let grants: GrantLedger
    let identities: IdentityDirectory

    private var configuration: ProviderConfiguration { context.configuration }

    /// The token endpoint's JSON answer (RFC 6749 §5.1).
    func token(_ form: [String: String], clientID: String?, now: Date = Date()) async throws -> Data {
        guard let client = context.client(clientID) else { throw ProviderError(status: 401, error: .invalidClient, description: "unknown client") }
        switch form["grant_type"] {
        case "authorization_code":
            guard let code = form["code"], code.utf8.count <= 256 else { throw ProviderError.badRequest("invalid_grant", "unknown authorization code") }
            let redirectURI = form["redirect_uri"]
            let verifier = form["code_verifier"]
            let issued = try await context.database.transaction { transaction -> Verdict<Issued> in
                let grant: GrantLedger.CodeGrant
                switch try await self.grants.redeemCode(code, clientID: client.id, redirectURI: redirectURI, verifier: verifier, now: now, in: transaction) {
                case .refused(let error): return .refused(error)
                case .accepted(let accepted): grant = accepted
                }
                guard let familyExpiry = try await transaction.first("SELECT expires_at FROM grant_families WHERE id = \(grant.familyID)")?.date(0) else {
                    return .refused(.badRequest("invalid_grant", "this grant was revoked"))
                }
                try await self.grants.limitFamilies(identityID: grant.identityID, clientID: client.id, now: now, in: transaction)
                let tokens = try await self.grants.issueTokens(familyID: grant.familyID, familyExpiresAt: familyExpiry, withRefresh: true, now: now, in: transaction)
                return .accepted(Issued(identityID: grant.identityID, scope: grant.scope, nonce: grant.nonce, authTime: grant.authTime, tokens: tokens))
            }.get()
            return try await response(issued, clientID: client.id, now: now)
        case "refresh_token":
            // Checked before it is spent, so another client cannot burn someone's token.
            guard let token = form["refresh_token"], token.utf8.count <= 256 else { throw ProviderError.badRequest("invalid_grant", "unknown refresh token") }
            let issued = try await context.database.transaction { transaction -> Verdict<Issued> in
                let grant: GrantLedger.TokenGrant
                switch try await self.grants.rotateRefreshToken(token, clientID: client.id, now: now, in: transaction) {
                case .refused(let error): return .refused(error)
                case .accepted(let accepted): grant = accepted
                }
                let tokens = try await self.grants.issueTokens(familyID: grant.familyID, familyExpiresAt: grant.familyExpiresAt, withRefresh: true, now: now, in: transaction)
                return .accepted(Issued(identityID: grant.identityID, scope: grant.scope, nonce: nil, authTime: grant.authTime, tokens: tokens))
            }.get()
            return try await response(issued, clientID: client.id, now: now)
        default:
            throw ProviderError.badRequest("unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
        }
    }

    private struct Issued: Sendable {
        var identityID: String
        var scope: String
        var nonce: String?
        var authTime: Date
        var tokens: (access: String, refresh: String?, expiresAt: Date)
    }

    /// The token response with a fresh ID token (OIDC Core §3.1.3.3, §3.1.3.6).
    private func response(_ issued: Issued, clientID: String, now: Date) async throws -> Data {
        let key = try await context.signingKeys.current(now: now)
        let seconds = Int(now.timeIntervalSince1970)
        let claims = IDTokenClaimSet(
            iss: context.issuer.absoluteString, sub: issued.identityID, aud: clientID,
            iat: seconds, exp: seconds + Int(configuration.accessTokenLifetime),
            authTime: Int(issued.authTime.timeIntervalSince1970), nonce: issued.nonce, amr: ["pop", "swk"],
            atHash: Base64URL.encode(try DigestAlgorithm.sha256.hash(Data(issued.tokens.access.utf8)).prefix(16))
        )
        let idToken = try JWS.sign(payload: Self.encode(claims), with: key.key, keyID: key.kid, type: "JWT")
        return try Self.encode(TokenResponse(
            accessToken: issued.tokens.access, tokenType: "Bearer", expiresIn: Int(configuration.accessTokenLifetime),
            refreshToken: issued.tokens.refresh, idToken: idToken, scope: issued.scope
        ))
    }

    /// JSON with sorted keys, so documents and signed payloads are stable.
    static func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// The claims for a live access token; checked against the store on every call, so a
    /// revoked grant stops here at once, on every instance.
    func userInfo(accessToken: String, now: Date = Date()) async throws -> Data {
        guard accessToken.utf8.count <= 256 else { throw ProviderError.unauthorized }
        let identity = try await context.database.transaction { transaction -> Identity? in
            guard let grant = try await self.grants.accessGrant(accessToken, now: now, in: transaction) else { return nil }
            return try await self.identities.identity(grant.identityID, in: transaction)
        }
        guard let identity else { throw ProviderError.unauthorized }
        return try Self.encode(UserInfoResponse(sub: identity.id, preferredUsername: identity.username, name: identity.displayName, email: identity.email))
    }

    /// RFC 7009: always 200; a refresh token takes its grant family with it.
    func revoke(_ token: String, clientID: String, now: Date = Date()) async throws {
        guard token.utf8.count <= 256 else { return }
        try await context.database.transaction { transaction in
            try await self.grants.revokeToken(token, clientID: clientID, now: now, in: transaction)
        }
    }

    // MARK: Documents

    func discovery() throws -> Data {
        try Self.encode(DiscoveryDocument(
            issuer: context.issuer.absoluteString,
            authorizationEndpoint: context.url(ProtocolPath.authorization).absoluteString,
            tokenEndpoint: context.url(ProtocolPath.token).absoluteString,
            jwksURI: context.url(ProtocolPath.jwks).absoluteString,
            userinfoEndpoint: context.url(ProtocolPath.userInfo).absoluteString,
            revocationEndpoint: context.url(ProtocolPath.revocation).absoluteString
        ))
    }

    /// Every published key (``SigningKeys``), so tokens of a key being rotated in or out
    /// still verify.
    func jwks(now: Date = Date()) async throws -> Data {
        let keys = try await context.signingKeys.published(now: now).map { entry in
            JWKSDocument.Key(kty: entry.jwk.kty, crv: entry.jwk.crv ?? "", x: entry.jwk.x ?? "", y: entry.jwk.y ?? "", kid: entry.kid, alg: "ES256", use: "sig")
        }
        return try Self.encode(JWKSDocument(keys: keys))
    }
}
