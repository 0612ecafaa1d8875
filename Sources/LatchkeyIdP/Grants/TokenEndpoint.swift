import Foundation
import LatchkeyCrypto
import LatchkeyOAuth

/// The token endpoint (RFC 6749 §3.2, §4.1.3, §6), userinfo (OIDC Core §5.3) and
/// revocation (RFC 7009), over the grant families of ``GrantLedger``.
struct TokenEndpoint: Sendable {
    let context: ProviderContext
    let grants: GrantLedger
    let identities: IdentityDirectory

    private var configuration: ProviderConfiguration { context.configuration }

    /// The token endpoint's JSON answer (RFC 6749 §5.1).
    func token(_ form: [String: String], clientID: String?, now: Date = Date()) async throws -> Data {
        guard let client = context.client(clientID) else { throw ProviderError(status: 401, error: "invalid_client", description: "unknown client") }
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
        var claims: [String: Any] = [
            "iss": context.issuer.absoluteString, "sub": issued.identityID, "aud": clientID,
            "iat": seconds, "exp": seconds + Int(configuration.accessTokenLifetime),
            "auth_time": Int(issued.authTime.timeIntervalSince1970), "amr": ["pop", "swk"],
            "at_hash": Base64URL.encode(try DigestAlgorithm.sha256.hash(Data(issued.tokens.access.utf8)).prefix(16)),
        ]
        if let nonce = issued.nonce { claims["nonce"] = nonce }
        let idToken = try JWS.sign(payload: JSONDocument.encode(claims), with: key.key, keyID: key.kid, type: "JWT")
        var response: [String: Any] = [
            "access_token": issued.tokens.access, "token_type": "Bearer", "expires_in": Int(configuration.accessTokenLifetime),
            "id_token": idToken, "scope": issued.scope,
        ]
        if let refresh = issued.tokens.refresh { response["refresh_token"] = refresh }
        return JSONDocument.encode(response)
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
        var claims: [String: Any] = ["sub": identity.id, "preferred_username": identity.username, "name": identity.displayName]
        if let email = identity.email { claims["email"] = email }
        return JSONDocument.encode(claims)
    }

    /// RFC 7009: always 200; a refresh token takes its grant family with it.
    func revoke(_ token: String, clientID: String?, now: Date = Date()) async throws {
        guard token.utf8.count <= 256 else { return }
        try await context.database.transaction { transaction in
            try await self.grants.revokeToken(token, clientID: clientID, now: now, in: transaction)
        }
    }

    // MARK: Documents

    func discovery() -> Data {
        JSONDocument.encode([
            "issuer": context.issuer.absoluteString,
            "authorization_endpoint": context.url("authorize").absoluteString,
            "token_endpoint": context.url("token").absoluteString,
            "jwks_uri": context.url("jwks").absoluteString,
            "userinfo_endpoint": context.url("userinfo").absoluteString,
            "revocation_endpoint": context.url("revoke").absoluteString,
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "authorization_response_iss_parameter_supported": true,
            "scopes_supported": ["openid", "profile", "email", "offline_access"],
        ])
    }

    /// Every published key (``SigningKeys``), so tokens of a key being rotated in or out
    /// still verify.
    func jwks(now: Date = Date()) async throws -> Data {
        let keys = try await context.signingKeys.published(now: now).map { entry -> [String: Any] in
            ["kty": entry.jwk.kty, "crv": entry.jwk.crv ?? "", "x": entry.jwk.x ?? "", "y": entry.jwk.y ?? "", "kid": entry.kid, "alg": "ES256", "use": "sig"]
        }
        return JSONDocument.encode(["keys": keys])
    }
}
