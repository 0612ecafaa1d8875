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
    /// The device grant's codes (RFC 8628), which its polls redeem.
    let devices: DeviceAuthorizations

    private var configuration: ProviderConfiguration { context.configuration }
    /// The DPoP proof checker every request shares, made with the endpoint: a checker made
    /// per request started with empty caches and imported the client's key again for each
    /// proof.
    let verifier = DPoPProofVerifier()
    /// DPoP checks, with the server nonces when `--require-dpop-nonce` is on.
    var dpop: DPoPBinding {
        get throws {
            DPoPBinding(configuration: configuration, nonces: configuration.requiresDPoPNonce ? try context.dpopNonces : nil, verifier: verifier)
        }
    }

    /// The token endpoint's JSON answer (RFC 6749 §5.1) to `client`, already authenticated
    /// (``ClientAuthenticator``). `dpopProofs` are the request's `DPoP` headers (RFC 9449
    /// §5): a valid proof binds the grant's tokens to its key.
    func token(_ request: TokenRequest, client: RegisteredClient, dpopProofs: [String] = [], now: Date = ProviderClock.now) async throws -> Data {
        if let grant = request.grantType, Self.grants.contains(grant), !client.allows(grant) {
            throw ProviderError.badRequest(.unauthorizedClient, "this client may not use the \(grant.rawValue) grant")
        }
        let dpop = try self.dpop
        let proof = try dpop.proof(dpopProofs, method: HTTPMethod.post, url: context.url(ProtocolPath.token), now: now)
        if proof == nil, configuration.requiresDPoP {
            throw ProviderError.badRequest(.invalidDPoPProof, "this provider issues DPoP-bound tokens only: send a DPoP proof (RFC 9449)")
        }
        switch request.grantType {
        case .authorizationCode?:
            guard let code = request.code, code.utf8.count <= GrantLedger.maximumCodeLength else {
                throw ProviderError.badRequest(.invalidGrant, "unknown authorization code")
            }
            // A request naming its resource is checked against the family's in the transaction.
            if proof == nil, request.resource == nil, context.database.dialect == .postgres,
               let issued = try await redeemInOneStatement(code, request: request, client: client, now: now) {
                return try await response(issued, clientID: client.id, now: now)
            }
            let issued = try await context.database.transaction { transaction -> Verdict<Issued> in
                let grant: GrantLedger.CodeGrant
                switch try await self.grants.redeemCode(code, client: client, redirectURI: request.redirectURI, verifier: request.codeVerifier, now: now, in: transaction) {
                case .refused(let error): return .refused(error)
                case .accepted(let accepted): grant = accepted
                }
                // Thrown, not refused: the transaction rolls back and the code stays usable
                // (by the client that holds the key; with the resource it was asked for).
                try ResourceServers.check(request.resource, against: grant.resource)
                let bound = try await self.bindDPoP(proof, boundTo: grant.dpopJKT, familyID: grant.familyID, in: transaction)
                let tokens = try await self.grants.issueTokens(for: grant, now: now, in: transaction)
                return .accepted(Issued(
                    identityID: grant.identityID, clientID: client.id, scope: grant.scope, nonce: grant.nonce, authTime: grant.authTime, tokens: tokens,
                    dpopJKT: bound ? grant.dpopJKT ?? proof?.thumbprint : nil, resource: grant.resource
                ))
            }.get()
            return try await response(issued, clientID: client.id, now: now)
        case .refreshToken?:
            // Checked before it is spent, so another client cannot burn someone's token.
            guard let token = request.refreshToken, token.utf8.count <= 256 else { throw ProviderError.badRequest(.invalidGrant, "unknown refresh token") }
            let issued = try await context.database.transaction { transaction -> Verdict<Issued> in
                let grant: GrantLedger.TokenGrant
                switch try await self.grants.rotateRefreshToken(token, clientID: client.id, now: now, in: transaction) {
                case .refused(let error): return .refused(error)
                case .accepted(let accepted): grant = accepted
                }
                // Thrown: the rotation rolls back with it, and the token stays usable.
                try ResourceServers.check(request.resource, against: grant.resource)
                let bound = try await self.bindDPoP(proof, boundTo: grant.dpopJKT, familyID: grant.familyID, in: transaction)
                let tokens = try await self.grants.issueTokens(familyID: grant.familyID, familyExpiresAt: grant.familyExpiresAt, withRefresh: true, now: now, in: transaction)
                try await self.grants.audit.record(AuditEntry(
                    .tokenRefreshed, actor: .client(client.id), subject: grant.identityID, client: client.id,
                    details: AuditEvent.Details(grantType: GrantType.refreshToken.rawValue, scope: grant.scope), now: now
                ), in: transaction)
                return .accepted(Issued(
                    identityID: grant.identityID, clientID: client.id, scope: grant.scope, nonce: nil, authTime: grant.authTime, tokens: tokens,
                    dpopJKT: bound ? grant.dpopJKT ?? proof?.thumbprint : nil, resource: grant.resource
                ))
            }.get()
            return try await response(issued, clientID: client.id, now: now)
        case .clientCredentials?:
            return try await clientCredentials(request, client: client, proof: proof, now: now)
        case .deviceCode?:
            // RFC 8628 §3.4–3.5: a refusal (pending, slow_down, denied, expired) is
            // committed with the poll's time; an approval is spent once, its tokens bound
            // to the DPoP key of the poll's proof when there is one.
            guard let deviceCode = request.deviceCode else { throw ProviderError.badRequest(.invalidRequest, "device_code is required") }
            let issued = try await context.database.transaction { transaction -> Verdict<Issued> in
                let (familyID, hostLogin): (String, Bool)
                switch try await self.devices.redeem(deviceCode, clientID: client.id, now: now, in: transaction) {
                case .refused(let error): return .refused(error)
                case .accepted(let accepted): (familyID, hostLogin) = accepted
                }
                guard let family = try await self.grants.liveFamily(familyID, in: transaction) else {
                    return .refused(.badRequest(.invalidGrant, "this grant was revoked"))
                }
                try ResourceServers.check(request.resource, against: family.resource)
                let bound = try await self.bindDPoP(proof, boundTo: nil, familyID: familyID, in: transaction)
                try await self.grants.limitFamilies(identityID: family.identityID, clientID: client.id, now: now, in: transaction)
                let tokens = try await self.grants.issueTokens(
                    familyID: familyID, familyExpiresAt: family.familyExpiresAt, withRefresh: !hostLogin, now: now, in: transaction
                )
                try await self.grants.audit.record(AuditEntry(
                    .tokenIssued, actor: .client(client.id), subject: family.identityID, client: client.id,
                    details: AuditEvent.Details(grantType: GrantType.deviceCode.rawValue, scope: family.scope), now: now
                ), in: transaction)
                return .accepted(Issued(
                    identityID: family.identityID, clientID: client.id, scope: family.scope, nonce: nil, authTime: family.authTime, tokens: tokens,
                    dpopJKT: bound ? proof?.thumbprint : nil, resource: family.resource
                ))
            }.get()
            return try await response(issued, clientID: client.id, now: now)
        default:
            throw ProviderError.badRequest(.unsupportedGrantType, "grant_type must be one of " + Self.grants.map(\.rawValue).joined(separator: ", "))
        }
    }

    /// The grants this endpoint knows (discovery's `grant_types_supported`).
    static let grants: [GrantType] = [.authorizationCode, .refreshToken, .clientCredentials, .deviceCode]

    /// RFC 6749 §4.4: an access token for a confidential client itself, `sub` = its id, no
    /// ID token and no refresh token (§4.4.3), its scope within the client's registered
    /// scopes (a scope it lacks is `invalid_scope`, §5.2), bound to the DPoP key of the
    /// request's proof when there is one.
    private func clientCredentials(_ request: TokenRequest, client: RegisteredClient, proof: DPoPVerifiedProof?, now: Date) async throws -> Data {
        guard client.isConfidential else {
            throw ProviderError.badRequest(.unauthorizedClient, "the client credentials grant is for clients that authenticate (RFC 6749 §4.4)")
        }
        let requested = (request.scope ?? "").split(separator: " ").map(String.init)
        let allowed = client.scopes ?? []
        guard request.scope.map({ $0.utf8.count <= 2048 }) ?? true, requested.allSatisfy(allowed.contains) else {
            throw ProviderError.badRequest(.invalidScope, "the client asked for a scope it is not registered for")
        }
        let scope = Array(Set(requested)).sorted().joined(separator: " ")
        let access = try ProviderContext.randomToken()
        let expiresAt = now.addingTimeInterval(configuration.accessTokenLifetime)
        let resource = try await context.database.transaction { transaction in
            let resource = try await ResourceServers(context: self.context).audience(request.resource, client: client, in: transaction)
            if let proof { try await self.dpop.spend(proof, resource: false, in: transaction) }
            try await transaction.execute("""
                INSERT INTO client_tokens (hash, client_id, scope, dpop_jkt, created_at, expires_at, resource)
                VALUES (\(try ProviderContext.hash(access)), \(client.id), \(scope), \(proof?.thumbprint), \(now), \(expiresAt), \(resource))
                """)
            try await self.grants.audit.record(AuditEntry(
                .tokenIssued, actor: .client(client.id), client: client.id,
                details: AuditEvent.Details(grantType: GrantType.clientCredentials.rawValue, scope: scope), now: now
            ), in: transaction)
            return resource
        }
        let handedOut = try await accessToken(Issued(
            identityID: client.id, clientID: client.id, scope: scope, authTime: nil, tokens: (access, nil, expiresAt), dpopJKT: proof?.thumbprint,
            resource: resource
        ), now: now)
        return try Self.encode(TokenResponse(
            accessToken: handedOut, tokenType: proof == nil ? .bearer : .dpop, expiresIn: configuration.accessTokenLifetime,
            refreshToken: nil, idToken: nil, scope: scope.isEmpty ? nil : scope
        ))
    }

    private struct Issued: Sendable {
        var identityID: String
        var clientID: String
        var scope: String
        var nonce: String?
        var authTime: Date?
        var tokens: (access: String, refresh: String?, expiresAt: Date)
        /// The DPoP key the tokens are bound to (`token_type: DPoP`), if any.
        var dpopJKT: String?
        /// The resource they are for (RFC 8707), if any.
        var resource: String?
    }

    /// RFC 9449 §5 and §10: a family bound to a key (by `dpop_jkt` at /authorize or an
    /// earlier proof) is used only with a proof of that key, so a refresh token or code
    /// taken elsewhere is useless; an unbound family is bound by its first proof. The
    /// proof's `jti` is spent. Returns whether the family is bound. Throws (rolling the
    /// transaction back) on a missing or other key.
    private func bindDPoP(_ proof: DPoPVerifiedProof?, boundTo jkt: String?, familyID: String, in transaction: any SQLTransaction) async throws -> Bool {
        guard let proof else {
            guard jkt == nil else {
                throw ProviderError.badRequest(.invalidDPoPProof, "this grant is bound to a DPoP key: the request needs a proof of it")
            }
            return false
        }
        if let jkt {
            guard ConstantTime.isEqual(Data(jkt.utf8), Data(proof.thumbprint.utf8)) else {
                throw ProviderError.badRequest(.invalidDPoPProof, "the DPoP proof is made with another key than the one this grant is bound to")
            }
        } else {
            try await grants.bind(familyID: familyID, toDPoPKey: proof.thumbprint, in: transaction)
        }
        try await self.dpop.spend(proof, resource: false, in: transaction)
        return true
    }

    /// A sealed bearer code (``CodeTicket``) redeemed on PostgreSQL in one statement
    /// (``GrantLedger/redeemInOneStatement(_:ticket:client:redirectURI:codeChallenge:now:in:)``).
    /// Nil, for the transaction to redeem or refuse, when the code does not open as a
    /// ticket, the verifier is not one (RFC 7636 §4.1), or the statement found nothing to
    /// spend: the transaction then finds why, refuses with that reason and, for a replay,
    /// revokes the family.
    private func redeemInOneStatement(_ code: String, request: TokenRequest, client: RegisteredClient, now: Date) async throws -> Issued? {
        guard let ticket = try context.tickets.open(CodeTicket.self, from: code),
              let verifier = request.codeVerifier, let challenge = try? PKCE(verifier: verifier).challenge,
              let redeemed = try await grants.redeemInOneStatement(
                  code, ticket: ticket, client: client, redirectURI: request.redirectURI ?? "", codeChallenge: challenge, now: now, in: context.database
              )
        else { return nil }
        return Issued(
            identityID: ticket.identityID, clientID: client.id, scope: ticket.scope, nonce: redeemed.nonce, authTime: redeemed.authTime,
            tokens: redeemed.tokens, dpopJKT: nil, resource: redeemed.resource
        )
    }

    /// The token response with a fresh ID token (OIDC Core §3.1.3.3, §3.1.3.6).
    private func response(_ issued: Issued, clientID: String, now: Date) async throws -> Data {
        let access = try await accessToken(issued, now: now)
        let key = try await context.signingKeys.current(now: now)
        // `amr`: `pop`, proof of possession of a key, and `swk`, a software-secured key (RFC 8176 §2).
        let claims = IDTokenClaims(
            issuer: context.issuer.absoluteString, subject: issued.identityID, audiences: [clientID],
            expiresAt: now.addingTimeInterval(configuration.accessTokenLifetime), issuedAt: now,
            nonce: issued.nonce, authTime: issued.authTime,
            accessTokenHash: Base64URL.encode(try DigestAlgorithm.sha256.hash(Data(access.utf8)).prefix(16)),
            authenticationMethods: ["pop", "swk"]
        )
        let idToken = try JWS.sign(payload: claims.encodedJSON, with: key.key, keyID: key.kid, type: "JWT")
        return TokenResponse(
            accessToken: access, tokenType: issued.dpopJKT != nil ? .dpop : .bearer, expiresIn: configuration.accessTokenLifetime,
            refreshToken: issued.tokens.refresh, idToken: idToken, scope: issued.scope
        ).encodedJSON
    }

    /// JSON with sorted keys, so documents and signed payloads are stable.
    static func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// How a request presents its access token (RFC 6750 §2.1, RFC 9449 §7.1).
    struct Presentation: Sendable {
        enum Scheme: Sendable { case bearer, dpop }
        var scheme: Scheme
        var token: String
        var dpopProofs: [String]
    }

    /// The claims for a live access token (OIDC Core §5.3), through ``resourceGrant(_:method:url:now:in:)``.
    func userInfo(_ presentation: Presentation, now: Date = ProviderClock.now) async throws -> Data {
        let url = context.url(ProtocolPath.userInfo)
        let identity = try await context.database.transaction { transaction -> Identity? in
            let grant = try await self.resourceGrant(presentation, method: HTTPMethod.get, url: url, now: now, in: transaction)
            return try await self.identities.identity(grant.identityID, in: transaction)
        }
        guard let identity else { throw Self.unknownToken(presentation) }
        return try Self.encode(UserInfoClaims(sub: identity.id, preferredUsername: identity.username, name: identity.displayName, email: identity.email))
    }

    /// The grant of a live access token presented to one of the provider's own resources
    /// (`/userinfo`, `/v1/ssh/certificates`), checked against the store on every call, so
    /// a revoked grant stops here at once, on every instance. A DPoP-bound token is taken
    /// only with the DPoP scheme and a proof of its key carrying its `ath` for this
    /// `method` and `url` (RFC 9449 §7.1); presented as a bearer token it is refused, and
    /// an unbound token is not accepted under the DPoP scheme. An unknown, expired or
    /// revoked token is refused as the scheme it came in demands; so is a client
    /// credentials token, which names no person.
    func resourceGrant(
        _ presentation: Presentation, method: String, url: URL, now: Date, in transaction: any SQLTransaction
    ) async throws -> GrantLedger.TokenGrant {
        guard case .person(let grant) = try await resourceHolder(presentation, method: method, url: url, acceptingClients: false, now: now, in: transaction) else {
            throw Self.unknownToken(presentation)
        }
        return grant
    }

    /// Who holds an access token presented to a resource that serves clients as well as
    /// people (`/v1/ssh/certificates`): a person's grant, or, with `acceptingClients`, a
    /// client credentials token (RFC 6749 §4.4), checked as ``resourceGrant(_:method:url:now:in:)``
    /// checks a person's.
    func resourceHolder(
        _ presentation: Presentation, method: String, url: URL, acceptingClients: Bool, now: Date, in transaction: any SQLTransaction
    ) async throws -> GrantLedger.TokenHolder {
        let accessToken = presentation.token
        guard accessToken.utf8.count <= 256 else { throw ProviderError.unauthorized }
        let dpop = try self.dpop
        let proof = presentation.scheme == .dpop
            ? try dpop.proof(presentation.dpopProofs, method: method, url: url, accessToken: accessToken, now: now) : nil
        let holder: GrantLedger.TokenHolder
        if let grant = try await grants.accessGrant(accessToken, now: now, in: transaction) {
            holder = .person(grant)
        } else if acceptingClients, let client = try await grants.clientAccessGrant(accessToken, now: now, in: transaction) {
            holder = .client(client)
        } else {
            throw Self.unknownToken(presentation)
        }
        // RFC 8707: a token asked for another resource is not for the provider's own.
        guard holder.resource == nil else {
            throw presentation.scheme == .dpop
                ? DPoPBinding.refusal(.invalidToken, "this access token is for another resource", resource: true) : ProviderError.unauthorized
        }
        switch (holder.dpopJKT, presentation.scheme) {
        case (nil, .bearer):
            break
        case (nil, .dpop):
            throw DPoPBinding.refusal(.invalidToken, "this access token is not bound to a DPoP key; present it as a bearer token", resource: true)
        case (.some, .bearer):
            throw DPoPBinding.refusal(.invalidToken, "this access token is bound to a DPoP key: present it with the DPoP scheme and a proof", resource: true)
        case (.some(let jkt), .dpop):
            guard let proof else {
                throw DPoPBinding.refusal(.invalidDPoPProof, "a DPoP proof is required with a DPoP-bound token", resource: true)
            }
            guard ConstantTime.isEqual(Data(jkt.utf8), Data(proof.thumbprint.utf8)) else {
                throw DPoPBinding.refusal(.invalidDPoPProof, "the DPoP proof is made with another key than the token is bound to", resource: true)
            }
            try await dpop.spend(proof, resource: true, in: transaction)
        }
        return holder
    }

    /// The refusal of a token the store does not know (any more), challenged in the scheme
    /// the token came in (RFC 9449 §7.1 for DPoP).
    static func unknownToken(_ presentation: Presentation) -> ProviderError {
        presentation.scheme == .dpop
            ? DPoPBinding.refusal(.invalidToken, "the access token is unknown, expired or revoked", resource: true) : ProviderError.unauthorized
    }

    /// RFC 7009: always 200; a refresh token takes its grant family with it. A JWT access
    /// token (RFC 9068) is found by its verified `jti`; it stops at introspection at once,
    /// and offline at its `exp`.
    func revoke(_ token: String, clientID: String, now: Date = ProviderClock.now) async throws {
        guard let hash = try await jwtAccessTokens.rowKey(of: token, now: now) else { return }
        try await context.database.transaction { transaction in
            try await self.grants.revokeToken(hash: hash, clientID: clientID, now: now, in: transaction)
        }
    }

    /// JWT access tokens (RFC 9068), for the resources whose servers take them.
    var jwtAccessTokens: JWTAccessTokens { JWTAccessTokens(context: context) }

    /// The access token handed out for `issued`: the opaque one, or, when its resource's
    /// server takes JWT access tokens, the JWT standing for it.
    private func accessToken(_ issued: Issued, now: Date) async throws -> String {
        guard let resource = issued.resource, try await ResourceServers(context: context).format(of: resource) == .jwt else {
            return issued.tokens.access
        }
        return try await jwtAccessTokens.mint(replacing: issued.tokens.access, for: JWTAccessTokens.Grant(
            subject: issued.identityID, clientID: issued.clientID, scope: issued.scope, resource: resource, authTime: issued.authTime,
            dpopJKT: issued.dpopJKT, expiresAt: issued.tokens.expiresAt
        ), now: now)
    }

    // MARK: Documents

    func discovery() throws -> Data {
        try Self.encode(DiscoveryDocument.metadata(context))
    }

    /// Every published key (``SigningKeys``), so tokens of a key being rotated in or out
    /// still verify.
    func jwks(now: Date = ProviderClock.now) async throws -> Data {
        let keys = try await context.signingKeys.published(now: now).map { entry in
            JSONWebKey(kty: entry.jwk.kty, crv: entry.jwk.crv, x: entry.jwk.x, y: entry.jwk.y, kid: entry.kid, alg: JWSAlgorithm.es256.name, use: JSONWebKey.signatureUse)
        }
        return try Self.encode(JWKSDocument(keys: keys))
    }
}
