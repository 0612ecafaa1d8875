import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyWebAuthn

/// Everything the provider knows, behind one actor: identities, credentials, bind jobs,
/// authentication sessions, codes and tokens. The HTTP layer only translates.
actor ProviderState {
    struct Identity: Sendable {
        var id: String
        var username: String
        var email: String?
        var displayName: String
    }

    struct Credential: Sendable {
        var identityID: String
        var record: RelyingParty.RegisteredCredential
        var revoked = false
    }

    struct BindJob: Sendable {
        enum Kind: String, Sendable {
            case bind
            /// Binding replaces (revokes) the identity's existing credentials.
            case recovery
        }

        var id: String
        var tokenHash: Data
        var identityID: String
        var kind: Kind
        var expiresAt: Date
        var postBindingRedirectURI: String?
        var challenge: Data?
        var used = false
        /// The hash of the e-mailed code, when the policy asks for one.
        var emailCodeHash: Data?
        var codeVerified = false
        var failedCodeAttempts = 0
        var termsAccepted = false
        /// This job asks for an e-mailed code first, whatever the provider-wide policy.
        var requireEmailCode = false
    }

    /// A message the provider would have e-mailed (the demo's and tests' mailbox).
    struct OutboxMessage: Sendable {
        var to: String
        var subject: String
        var body: String
        var code: String?
        var createdAt: Date
    }

    /// What a bind URL answers: the creation options, or first a step to complete.
    enum BindAnswer: Sendable {
        case options(PublicKeyCredentialCreationOptionsJSON)
        case verifyCode(message: String)
        case acceptTerms(message: String)
    }

    struct AuthenticationSession: Sendable {
        var id: String
        var clientID: String
        var redirectURI: String
        var state: String?
        var nonce: String?
        var codeChallenge: String
        var scope: String
        var challenge: Data
        var allowedCredentials: [Data]
        var expiresAt: Date
        var completed = false
    }

    struct CodeGrant: Sendable {
        var clientID: String
        var redirectURI: String
        var codeChallenge: String
        var identityID: String
        var nonce: String?
        var scope: String
        var authTime: Date
        var expiresAt: Date
        var used = false
        /// Access and refresh tokens issued for this code, revoked if the code is replayed.
        var issuedTokens: [String] = []
    }

    struct TokenGrant: Sendable {
        var identityID: String
        var clientID: String
        var scope: String
        var authTime: Date
        var expiresAt: Date?
    }

    let configuration: ProviderConfiguration
    private(set) var issuer: URL
    let signingKey: SigningKey
    let keyID: String
    /// Keys the decoy credential IDs answered for unknown login hints.
    let decoyKey: SymmetricKey
    private(set) var identities: [String: Identity] = [:]
    /// Identity ids by ``Username/key(_:)`` and by ``Username/skeleton(_:)``.
    private var identityIDsByKey: [String: String] = [:]
    private var identityIDsBySkeleton: [String: String] = [:]
    var credentials: [Data: Credential] = [:]
    /// Transfers by id, the live codes' prefixes, and wrong codes per client address
    /// (ProviderState+Transfers.swift).
    var transfers: [String: Transfer] = [:]
    var transferPrefixes: [String: String] = [:]
    var transferFailures: [String: [Date]] = [:]
    /// Sign-ups and recoveries in progress, and when flows were started per key
    /// (ProviderState+Enrollment.swift).
    var enrollments: [String: Enrollment] = [:]
    var enrollmentStarts: [String: [Date]] = [:]
    private var bindJobs: [String: BindJob] = [:]
    private var sessions: [String: AuthenticationSession] = [:]
    private var codes: [String: CodeGrant] = [:]
    private var accessTokens: [String: TokenGrant] = [:]
    private var refreshTokens: [String: TokenGrant] = [:]
    /// Each identity's refresh tokens per client (key `identity|client`), oldest first.
    private var refreshTokenOrder: [String: [String]] = [:]
    /// When ``pruneExpired(now:force:)`` next does its work.
    private var nextPrune = Date.distantPast
    var outbox: [OutboxMessage] = []

    init(configuration: ProviderConfiguration) throws {
        self.configuration = configuration
        self.issuer = configuration.issuer ?? URL(fileURLWithPath: "/")
        if let directory = configuration.dataDirectory {
            signingKey = try ProviderSnapshot.signingKey(in: directory)
            if let snapshot = try ProviderSnapshot.load(from: directory) {
                for identity in snapshot.identities {
                    identities[identity.id] = Identity(id: identity.id, username: identity.username, email: identity.email, displayName: identity.displayName)
                    identityIDsByKey[Username.key(identity.username)] = identity.id
                    identityIDsBySkeleton[Username.skeleton(identity.username)] = identity.id
                }
                for record in snapshot.credentials {
                    let credential = try ProviderSnapshot.credential(record)
                    credentials[credential.record.id] = credential
                }
            }
        } else {
            signingKey = try SigningKey.generate(.es256)
        }
        keyID = try signingKey.publicKey.jwk.thumbprint()
        decoyKey = SymmetricKey(data: try SecureRandom.bytes(count: 32))
    }

    /// Writes the snapshot when the provider has a data directory.
    func persist() throws {
        guard let directory = configuration.dataDirectory else { return }
        try ProviderSnapshot(
            identities: identities.values.map { .init(id: $0.id, username: $0.username, email: $0.email, displayName: $0.displayName) },
            credentials: credentials.values.map(ProviderSnapshot.record)
        ).save(to: directory)
    }

    func setIssuer(_ issuer: URL) { self.issuer = issuer }

    /// The RP ID is the issuer's host; the origin is the issuer's origin.
    var relyingParty: RelyingParty {
        var origin = "\(issuer.scheme ?? "https")://\(issuer.host ?? "")"
        if let port = issuer.port { origin += ":\(port)" }
        return RelyingParty(id: issuer.host ?? "", origins: [origin])
    }

    func url(_ path: String) -> URL {
        issuer.appendingPathComponent(path)
    }

    static func randomToken() throws -> String {
        Base64URL.encode(try SecureRandom.bytes(count: 32))
    }

    static func hash(_ token: String) throws -> Data {
        try DigestAlgorithm.sha256.hash(Data(token.utf8))
    }

    // MARK: Admin

    func createIdentity(username: String, email: String?, displayName: String?) throws -> Identity {
        let name = try Username.validated(username)
        guard !isTaken(name) else {
            throw ProviderError(status: 409, error: "conflict", description: "username already exists, or one that looks the same")
        }
        let identity = Identity(id: UUID().uuidString.lowercased(), username: name, email: email, displayName: displayName ?? name)
        add(identity)
        try persist()
        return identity
    }

    /// Records an identity and indexes its name both ways (``Username/key(_:)`` for
    /// lookups, ``Username/skeleton(_:)`` for look-alikes), so neither needs a scan.
    private func add(_ identity: Identity) {
        identities[identity.id] = identity
        identityIDsByKey[Username.key(identity.username)] = identity.id
        identityIDsBySkeleton[Username.skeleton(identity.username)] = identity.id
    }

    /// Whether `name`, or a name that looks the same (``Username/skeleton(_:)``), is taken.
    func isTaken(_ name: String) -> Bool {
        identityIDsBySkeleton[Username.skeleton(name)] != nil
    }

    /// The identity called `name`, compared as ``Username/key(_:)`` (case and width aside).
    func identity(named name: String) -> Identity? {
        identityIDsByKey[Username.key(name)].flatMap { identities[$0] }
    }

    /// A bind job and its URL, `<issuer>/v1/bind/<job>?token=<token>`; only the token's hash is kept.
    func createBindJob(
        identityID: String,
        kind: BindJob.Kind = .bind,
        lifetime: TimeInterval? = nil,
        postBindingRedirectURI: String? = nil,
        requireEmailCode: Bool = false
    ) throws -> URL {
        guard identities[identityID] != nil else { throw ProviderError.notFound("no such identity") }
        let token = try Self.randomToken()
        let lifetime = min(max(lifetime ?? configuration.bindJobLifetime, 1), 30 * 86400)
        var job = BindJob(
            id: try Self.randomToken(), tokenHash: try Self.hash(token), identityID: identityID, kind: kind,
            expiresAt: Date().addingTimeInterval(lifetime), postBindingRedirectURI: postBindingRedirectURI
        )
        job.requireEmailCode = requireEmailCode || configuration.requireEmailCodeForBinding
        bindJobs[job.id] = job
        var components = URLComponents(url: url("v1/bind/\(job.id)"), resolvingAgainstBaseURL: false)
        components?.queryItems = [URLQueryItem(name: "token", value: token)]
        guard let bindURL = components?.url else { throw ProviderError(status: 500, error: "server_error", description: "cannot build the bind URL") }
        return bindURL
    }

    func credentials(of identityID: String) -> [Credential] {
        credentials.values.filter { $0.identityID == identityID }
    }

    func revokeCredential(_ id: Data) throws {
        guard credentials[id] != nil else { throw ProviderError.notFound("no such credential") }
        credentials[id]?.revoked = true
        try persist()
    }

    // MARK: Bind

    private func liveJob(_ id: String, token: String) throws -> BindJob {
        guard let job = bindJobs[id], ConstantTime.isEqual(job.tokenHash, try Self.hash(token)) else {
            throw ProviderError.notFound("unknown bind job or wrong token")
        }
        guard !job.used else { throw ProviderError.badRequest("invalid_grant", "this bind job was already used") }
        guard job.expiresAt > Date() else { throw ProviderError.badRequest("invalid_grant", "this bind job has expired") }
        return job
    }

    func bindOptions(job id: String, token: String) throws -> BindAnswer {
        var job = try liveJob(id, token: token)
        guard let identity = identities[job.identityID] else { throw ProviderError.notFound("identity gone") }
        if let terms = configuration.termsOfService, !job.termsAccepted {
            return .acceptTerms(message: terms)
        }
        if job.requireEmailCode, !job.codeVerified {
            // One code per job; fetching the job again does not mint a new one.
            if job.emailCodeHash == nil {
                let code = String(format: "%06u", try SecureRandom.uniform(below: 1_000_000))
                job.emailCodeHash = try Self.hash(code)
                bindJobs[id] = job
                outbox.append(OutboxMessage(
                    to: identity.email ?? identity.username, subject: "Your Latchkey verification code",
                    body: "Enter \(code) to add a passkey to \(identity.username).", code: code, createdAt: Date()
                ))
            }
            return .verifyCode(message: "Enter the code sent to \(Self.masked(identity.email ?? identity.username))")
        }
        let challenge = try SecureRandom.bytes(count: 32)
        job.challenge = challenge
        bindJobs[id] = job
        // A recovery replaces the old credentials, so a device that still holds one may
        // recover too: they are not excluded.
        return .options(creationOptions(for: identity, challenge: challenge, excludingExisting: job.kind != .recovery))
    }

    /// Creation options for a new credential of `identity` (WebAuthn §5.4), excluding the
    /// credentials it already has unless told not to.
    func creationOptions(for identity: Identity, challenge: Data, excludingExisting: Bool = true) -> PublicKeyCredentialCreationOptionsJSON {
        PublicKeyCredentialCreationOptionsJSON(
            rp: .init(id: relyingParty.id, name: "Latchkey reference provider"),
            user: .init(id: Data(identity.id.utf8), name: identity.username, displayName: identity.displayName),
            challenge: challenge,
            pubKeyCredParams: [.init(alg: -7), .init(alg: -8)],
            excludeCredentials: excludingExisting ? credentials(of: identity.id).map { .init(id: $0.record.id) } : nil,
            authenticatorSelection: .init(residentKey: "preferred", userVerification: "preferred"),
            attestation: "none"
        )
    }

    /// Checks an e-mailed code for a bind job, in constant time. Too many wrong codes
    /// kill the job.
    func verifyBindCode(job id: String, token: String, code: String) throws -> BindAnswer {
        var job = try liveJob(id, token: token)
        guard let expected = job.emailCodeHash else { return try bindOptions(job: id, token: token) }
        guard job.failedCodeAttempts < configuration.maximumCodeAttempts else {
            throw ProviderError.badRequest("invalid_grant", "too many wrong codes; ask for a new bind link")
        }
        guard ConstantTime.isEqual(try Self.hash(code.trimmingCharacters(in: .whitespaces)), expected) else {
            job.failedCodeAttempts += 1
            bindJobs[id] = job
            let left = configuration.maximumCodeAttempts - job.failedCodeAttempts
            throw ProviderError.badRequest("invalid_code", left > 0 ? "wrong code, \(left) attempts left" : "wrong code; this bind link is no longer usable")
        }
        job.codeVerified = true
        bindJobs[id] = job
        return try bindOptions(job: id, token: token)
    }

    /// Records that the user accepted the terms of service for a bind job.
    func acceptTerms(job id: String, token: String, accepted: Bool) throws -> BindAnswer {
        guard accepted else { throw ProviderError.badRequest("access_denied", "the terms were not accepted") }
        _ = try liveJob(id, token: token)
        bindJobs[id]?.termsAccepted = true
        return try bindOptions(job: id, token: token)
    }

    /// `a…@example.com`: enough for a user to recognise the address, not to learn it.
    static func masked(_ address: String) -> String {
        guard let at = address.firstIndex(of: "@"), at > address.startIndex else { return "your address" }
        return String(address[address.startIndex]) + "…" + address[at...]
    }

    func completeBind(job id: String, token: String, response: RegistrationResponseJSON) throws -> (Credential, String?) {
        let job = try liveJob(id, token: token)
        guard configuration.termsOfService == nil || job.termsAccepted else {
            throw ProviderError.badRequest("invalid_request", "accept the terms first")
        }
        guard !job.requireEmailCode || job.codeVerified else {
            throw ProviderError.badRequest("invalid_request", "verify the e-mailed code first")
        }
        guard let challenge = job.challenge else { throw ProviderError.badRequest("invalid_request", "fetch the bind job before submitting") }
        let record: RelyingParty.RegisteredCredential
        do {
            record = try relyingParty.verifyRegistration(response, challenge: challenge)
        } catch let error as WebAuthnError {
            throw ProviderError.badRequest("invalid_registration", error.reason)
        }
        guard credentials[record.id] == nil else { throw ProviderError.badRequest("invalid_registration", "credential already registered") }
        bindJobs[id]?.used = true
        if job.kind == .recovery {
            for (existing, credential) in credentials where credential.identityID == job.identityID {
                credentials[existing]?.revoked = true
            }
        }
        let credential = Credential(identityID: job.identityID, record: record)
        credentials[record.id] = credential
        try persist()
        return (credential, job.postBindingRedirectURI)
    }

    // MARK: Authorization

    func client(_ id: String?) -> ProviderConfiguration.Client? {
        configuration.clients.first { $0.id == id }
    }

    /// Whether `redirectURI` is registered for `client`: exactly, or for a loopback
    /// redirect, with any port (RFC 8252 §7.3).
    static func redirectMatches(_ redirectURI: String, _ client: ProviderConfiguration.Client) -> Bool {
        if client.redirectURIs.contains(redirectURI) { return true }
        guard var components = URLComponents(string: redirectURI), components.scheme == "http",
              ["127.0.0.1", "[::1]", "::1"].contains(components.host ?? "")
        else { return false }
        components.port = nil
        return components.string.map(client.redirectURIs.contains) ?? false
    }

    func startAuthentication(_ parameters: [String: String]) throws -> AuthenticationSession {
        guard let client = client(parameters["client_id"]) else {
            throw ProviderError.badRequest("invalid_client", "unknown client_id")
        }
        guard let redirectURI = parameters["redirect_uri"], Self.redirectMatches(redirectURI, client) else {
            throw ProviderError.badRequest("invalid_request", "redirect_uri is not registered for this client")
        }
        guard parameters["response_type"] == "code" else {
            throw ProviderError.badRequest("unsupported_response_type", "only response_type=code is supported")
        }
        guard parameters["code_challenge_method"] == "S256", let challenge = parameters["code_challenge"], challenge.utf8.count == 43 else {
            throw ProviderError.badRequest("invalid_request", "PKCE with code_challenge_method=S256 is required")
        }
        var allowed: [Data] = []
        if let hint = parameters["login_hint"], hint.utf8.count <= 256 {
            let identity = identity(named: hint)
            allowed = identity.map { credentials(of: $0.id).filter { !$0.revoked }.map(\.record.id) } ?? []
            // An unknown name (or one without credentials) gets a stable decoy credential
            // ID, so the options do not tell whether the username exists.
            if allowed.isEmpty {
                allowed = [try HMAC.authenticationCode(for: Data("login_hint:\(hint)".utf8), using: decoyKey)]
            }
        }
        pruneExpired()
        if sessions.count >= Self.maximumPending { pruneExpired(force: true) }
        guard sessions.count < Self.maximumPending else {
            throw ProviderError(status: 503, error: "temporarily_unavailable", description: "too many sign-ins in progress")
        }
        let session = AuthenticationSession(
            id: try Self.randomToken(), clientID: client.id, redirectURI: redirectURI, state: parameters["state"],
            nonce: parameters["nonce"], codeChallenge: challenge, scope: parameters["scope"] ?? "openid",
            challenge: try SecureRandom.bytes(count: 32), allowedCredentials: allowed,
            expiresAt: Date().addingTimeInterval(configuration.authenticationSessionLifetime)
        )
        sessions[session.id] = session
        return session
    }

    /// Bounds on what unauthenticated requests can make the provider hold.
    static let maximumPending = 10_000

    /// Drops expired sessions, codes, bind jobs and access tokens, so abandoned flows and
    /// old tokens do not pile up. Each pass rebuilds the tables, so it runs at most once a
    /// second (or when the pending sign-ins reach their cap): run on every `/authorize`, it
    /// was the provider's largest cost under load after JSON, growing with the codes held.
    private func pruneExpired(now: Date = Date(), force: Bool = false) {
        guard force || now >= nextPrune else { return }
        nextPrune = now.addingTimeInterval(1)
        sessions = sessions.filter { $0.value.expiresAt > now && !$0.value.completed }
        codes = codes.filter { $0.value.expiresAt.addingTimeInterval(configuration.authorizationCodeLifetime) > now }
        bindJobs = bindJobs.filter { $0.value.expiresAt > now }
        accessTokens = accessTokens.filter { ($0.value.expiresAt ?? .distantFuture) > now }
    }

    private func liveSession(_ id: String) throws -> AuthenticationSession {
        guard let session = sessions[id], !session.completed, session.expiresAt > Date() else {
            throw ProviderError.notFound("unknown, used or expired authentication session")
        }
        return session
    }

    func requestOptions(session id: String) throws -> (PublicKeyCredentialRequestOptionsJSON, String) {
        let session = try liveSession(id)
        let options = PublicKeyCredentialRequestOptionsJSON(
            challenge: session.challenge, rpId: relyingParty.id,
            allowCredentials: session.allowedCredentials.isEmpty ? nil : session.allowedCredentials.map { .init(id: $0) },
            userVerification: "preferred"
        )
        return (options, session.clientID)
    }

    /// Verifies the assertion and returns the redirect carrying code, state and iss (RFC 9207).
    func completeAuthentication(session id: String, response: AuthenticationResponseJSON) throws -> URL {
        let session = try liveSession(id)
        let credential = try verifyAssertion(response, challenge: session.challenge, allowedCredentialIDs: session.allowedCredentials)
        sessions[id]?.completed = true
        try persist()

        let code = try Self.randomToken()
        codes[code] = CodeGrant(
            clientID: session.clientID, redirectURI: session.redirectURI, codeChallenge: session.codeChallenge,
            identityID: credential.identityID, nonce: session.nonce, scope: session.scope, authTime: Date(),
            expiresAt: Date().addingTimeInterval(configuration.authorizationCodeLifetime)
        )
        var components = URLComponents(string: session.redirectURI)
        var items = components?.queryItems ?? []
        items.append(URLQueryItem(name: "code", value: code))
        if let state = session.state { items.append(URLQueryItem(name: "state", value: state)) }
        items.append(URLQueryItem(name: "iss", value: issuer.absoluteString))
        components?.queryItems = items
        // URLComponents leaves '+' as it is; a client reading the query as form encoding
        // (WHATWG URL §5.1) would take it for a space.
        let query = components?.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        components?.percentEncodedQuery = query
        guard let redirect = components?.url else { throw ProviderError(status: 500, error: "server_error", description: "cannot build the redirect") }
        return redirect
    }

    /// Verifies an assertion by a live (known, unrevoked) credential over `challenge`
    /// (WebAuthn §7.2) and records its new signature counter. The caller persists.
    func verifyAssertion(_ response: AuthenticationResponseJSON, challenge: Data, allowedCredentialIDs: [Data]) throws -> Credential {
        guard var credential = credentials[response.rawId.data] else {
            throw ProviderError.badRequest("invalid_credential", "unknown credential")
        }
        guard !credential.revoked else {
            throw ProviderError.badRequest("credential_revoked", "this credential was revoked; bind a new one")
        }
        let verified: RelyingParty.VerifiedAssertion
        do {
            verified = try relyingParty.verifyAuthentication(response, challenge: challenge, credential: credential.record, allowedCredentialIDs: allowedCredentialIDs)
        } catch let error as WebAuthnError {
            throw ProviderError.badRequest("invalid_assertion", error.reason)
        }
        credential.record.signCount = verified.signCount
        credentials[credential.record.id] = credential
        return credential
    }

    // MARK: Token endpoint

    /// The token endpoint's JSON answer (RFC 6749 §5.1).
    func token(_ form: [String: String], clientID: String?) throws -> Data {
        JSONDocument.encode(try tokenResponse(form, clientID: clientID))
    }

    private func tokenResponse(_ form: [String: String], clientID: String?) throws -> [String: Any] {
        guard let client = client(clientID) else { throw ProviderError(status: 401, error: "invalid_client", description: "unknown client") }
        switch form["grant_type"] {
        case "authorization_code":
            guard let code = form["code"], var grant = codes[code], grant.clientID == client.id else {
                throw ProviderError.badRequest("invalid_grant", "unknown authorization code")
            }
            if grant.used {
                // RFC 6749 §4.1.2: a replayed code revokes what it issued.
                for token in grant.issuedTokens { revoke(token) }
                throw ProviderError.badRequest("invalid_grant", "authorization code already used")
            }
            guard grant.expiresAt > Date() else { throw ProviderError.badRequest("invalid_grant", "authorization code expired") }
            guard form["redirect_uri"] == grant.redirectURI else { throw ProviderError.badRequest("invalid_grant", "redirect_uri differs from the authorization request") }
            guard let verifier = form["code_verifier"], (try? PKCE(verifier: verifier))?.challenge == grant.codeChallenge else {
                throw ProviderError.badRequest("invalid_grant", "PKCE verification failed")
            }
            grant.used = true
            let (response, issued) = try issueTokens(identityID: grant.identityID, clientID: client.id, scope: grant.scope, nonce: grant.nonce, authTime: grant.authTime, withRefresh: true)
            grant.issuedTokens += issued
            codes[code] = grant
            return response
        case "refresh_token":
            // Checked before it is consumed, so another client cannot burn someone's token.
            guard let token = form["refresh_token"], let grant = refreshTokens[token], grant.clientID == client.id else {
                throw ProviderError.badRequest("invalid_grant", "unknown refresh token")
            }
            refreshTokens[token] = nil
            return try issueTokens(identityID: grant.identityID, clientID: client.id, scope: grant.scope, nonce: nil, authTime: grant.authTime, withRefresh: true).0
        default:
            throw ProviderError.badRequest("unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
        }
    }

    /// A token response and the tokens in it.
    private func issueTokens(identityID: String, clientID: String, scope: String, nonce: String?, authTime: Date, withRefresh: Bool) throws -> ([String: Any], [String]) {
        let now = Date()
        let accessToken = try Self.randomToken()
        accessTokens[accessToken] = TokenGrant(identityID: identityID, clientID: clientID, scope: scope, authTime: authTime, expiresAt: now.addingTimeInterval(configuration.accessTokenLifetime))
        var claims: [String: Any] = [
            "iss": issuer.absoluteString, "sub": identityID, "aud": clientID,
            "iat": Int(now.timeIntervalSince1970), "exp": Int(now.timeIntervalSince1970 + configuration.accessTokenLifetime),
            "auth_time": Int(authTime.timeIntervalSince1970), "amr": ["pop", "swk"],
            "at_hash": Base64URL.encode(try DigestAlgorithm.sha256.hash(Data(accessToken.utf8)).prefix(16)),
        ]
        if let nonce { claims["nonce"] = nonce }
        let idToken = try JWS.sign(payload: JSONDocument.encode(claims), with: signingKey, keyID: keyID, type: "JWT")
        var response: [String: Any] = [
            "access_token": accessToken, "token_type": "Bearer", "expires_in": Int(configuration.accessTokenLifetime),
            "id_token": idToken, "scope": scope,
        ]
        var issued = [accessToken]
        if withRefresh {
            let refreshToken = try Self.randomToken()
            refreshTokens[refreshToken] = TokenGrant(identityID: identityID, clientID: clientID, scope: scope, authTime: authTime, expiresAt: nil)
            // Refresh tokens live until used or revoked; an identity keeps at most
            // `maximumRefreshTokensPerClient` live, the oldest dropped, so sign-ins that never
            // refresh do not grow the provider's memory without bound.
            let owner = identityID + "|" + clientID
            var order = refreshTokenOrder[owner, default: []].filter { refreshTokens[$0] != nil }
            order.append(refreshToken)
            while order.count > configuration.maximumRefreshTokensPerClient {
                refreshTokens[order.removeFirst()] = nil
            }
            refreshTokenOrder[owner] = order
            response["refresh_token"] = refreshToken
            issued.append(refreshToken)
        }
        return (response, issued)
    }

    func userInfo(accessToken: String) throws -> Data {
        guard let grant = accessTokens[accessToken], (grant.expiresAt ?? .distantFuture) > Date(), let identity = identities[grant.identityID] else {
            throw ProviderError.unauthorized
        }
        var claims: [String: Any] = ["sub": identity.id, "preferred_username": identity.username, "name": identity.displayName]
        if let email = identity.email { claims["email"] = email }
        return JSONDocument.encode(claims)
    }

    func revoke(_ token: String) {
        accessTokens[token] = nil
        refreshTokens[token] = nil
    }

    // MARK: Documents

    func discovery() -> Data {
        JSONDocument.encode([
            "issuer": issuer.absoluteString,
            "authorization_endpoint": url("authorize").absoluteString,
            "token_endpoint": url("token").absoluteString,
            "jwks_uri": url("jwks").absoluteString,
            "userinfo_endpoint": url("userinfo").absoluteString,
            "revocation_endpoint": url("revoke").absoluteString,
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

    func jwks() throws -> Data {
        let jwk = try signingKey.publicKey.jwk
        return JSONDocument.encode(["keys": [["kty": jwk.kty, "crv": jwk.crv ?? "", "x": jwk.x ?? "", "y": jwk.y ?? "", "kid": keyID, "alg": "ES256", "use": "sig"]]])
    }
}
