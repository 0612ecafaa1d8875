#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyOAuth

/// What the facade offers, by concern: each operation is the work of one service
/// (docs/ARCHITECTURE.md, "The facade and its services"), which this forwards to.
extension Embedded {
    // MARK: Credentials

    /// Every credential in the vault, oldest first (Beyond Identity's `getPasskeys`).
    public func credentials() async throws -> [Credential] {
        try await credentialStore.credentials()
    }

    /// Every credential in the vault, and every record that could not be read: the vault
    /// keeps each credential in a record of its own, so one damaged file (a bad disk, a
    /// tampered copy) hides that credential only. A tool should show the damage rather than
    /// list what is left as if it were everything.
    ///
    /// With `checkingKeys`, each TPM-held key is loaded into the TPM (and flushed): one
    /// that cannot sign here is listed with its ``Credential/unusableReason``, never
    /// dropped. That costs a TPM load per TPM key.
    public func scanCredentials(checkingKeys: Bool = false) async throws -> CredentialScan {
        try await credentialStore.scanCredentials(checkingKeys: checkingKeys)
    }

    /// What ``Configuration/keyProtection`` chooses for the next new credential, and why:
    /// for ``KeyProtectionSetting/automatic``, whether a TPM answers now.
    public func keyProtectionForNewCredentials() -> KeyProtectionChoice {
        credentialStore.keyProtectionForNewCredentials()
    }

    /// Deletes the credential's key from this host. The provider is not told: the key is
    /// gone, so the credential can never sign again. Deleting an id that is not in the
    /// vault is not an error; the result says whether anything was deleted.
    @discardableResult
    public func deleteCredential(id: String) async throws -> Bool {
        try await credentialStore.deleteCredential(id: id)
    }

    // MARK: Signing in

    /// Signs in at `issuer` and returns the authorization code with the PKCE verifier,
    /// for an app whose back end exchanges the code (RFC 6749 §4.1, RFC 7636).
    ///
    /// Builds the authorization request (fresh state, nonce, S256 challenge), asks the
    /// provider for its authenticate URL, signs its challenge with a credential bound at
    /// this provider (asking the step handler `choose-credential` when several fit), and
    /// checks the redirect: state, and `iss` (RFC 9207) against the issuer.
    ///
    /// `credential` names a ``Credential/id`` to use; when it is nil, the one credential
    /// that fits signs, or the step handler chooses.
    public func authorize(
        issuer: URL,
        clientID: String,
        redirectURI: URL,
        scopes: [String] = [OAuthScope.openID],
        credential: String? = nil
    ) async throws -> AuthorizationResult {
        try await signIns.authorize(issuer: issuer, clientID: clientID, redirectURI: redirectURI, scopes: scopes, credential: credential)
    }

    /// Signs in at `issuer` and returns validated tokens: everything
    /// ``authorize(issuer:clientID:redirectURI:scopes:credential:)`` does, then the code
    /// exchange with the PKCE verifier (RFC 6749 §4.1.3) and ID-token validation (OIDC
    /// Core §3.1.3.7: signature by the provider's JWKS, iss, aud, exp, nonce).
    ///
    /// With `proofOfPossession` ``ProofOfPossession/dpop`` (or that configuration), the
    /// tokens are bound to the credential's own DPoP key (RFC 9449): its thumbprint goes
    /// in the authorization request as `dpop_jkt` (§10), so the credential is chosen before
    /// the request is sent, and the exchange carries a proof (§5). A provider answering
    /// with bearer tokens is refused (``LatchkeyError/Code/dpopNotBound``).
    ///
    /// The tokens are kept in the vault for ``validTokens(issuer:clientID:redirectURI:scopes:credential:proofOfPossession:minimumValidity:)``
    /// unless ``Configuration/cachesTokens`` is off.
    public func authenticate(
        issuer: URL,
        clientID: String,
        redirectURI: URL,
        scopes: [String] = [OAuthScope.openID],
        credential: String? = nil,
        proofOfPossession: ProofOfPossession? = nil
    ) async throws -> Tokens {
        try await signIns.authenticate(issuer: issuer, clientID: clientID, redirectURI: redirectURI, scopes: scopes, credential: credential, proofOfPossession: proofOfPossession)
    }

    /// Answers an authenticate URL received from elsewhere (a deep link, another app's
    /// redirect): `https://<idp>/v1/authenticate/<session>` or
    /// `<scheme>://authenticate?api_base_url=<idp>&session_id=<session>`. Returns the
    /// provider's redirect URL carrying `code`, `state` and `iss`; whoever started the
    /// authorization request checks them and exchanges the code.
    public func authenticate(url: URL, credential: String? = nil) async throws -> URL {
        try await signIns.authenticate(url: url, credential: credential)
    }

    /// Refreshes tokens from ``authenticate(issuer:clientID:redirectURI:scopes:credential:proofOfPossession:)``
    /// (RFC 6749 §6). A new ID token is validated and must keep iss, sub and aud (OIDC
    /// Core §12.2); a rotated refresh token replaces the old one. Bound tokens are
    /// refreshed with a proof of their key and stay bound to it (RFC 9449 §5). Cached
    /// tokens are replaced in the vault.
    public func refresh(_ tokens: Tokens, scopes: [String]? = nil) async throws -> Tokens {
        try await signIns.refresh(tokens, scopes: scopes)
    }

    /// Revokes the tokens at the provider (RFC 7009 §2.1): the refresh token, which ends
    /// the grant, and the access token; then forgets them if they are kept in the vault.
    public func revoke(_ tokens: Tokens) async throws {
        try await signIns.revoke(tokens)
    }


    // MARK: Kept tokens

    /// Tokens for `issuer` that are good for at least `minimumValidity` seconds more,
    /// with as little work as possible (`gcloud auth print-access-token` ergonomics):
    ///
    /// 1. the cached tokens of this issuer, client and redirect URI, when they cover
    ///    `scopes` (and are DPoP-bound, if `proofOfPossession` asks for that) and are
    ///    still valid;
    /// 2. else those tokens refreshed (RFC 6749 §6; with a proof of their key when bound),
    ///    and kept;
    /// 3. else a new sign-in
    ///    (``authenticate(issuer:clientID:redirectURI:scopes:credential:proofOfPossession:)``).
    ///
    /// All of it runs under the vault's `tokens` lock, across processes: callers that
    /// arrive together wait for the first and then take what it kept, so a refresh token
    /// (single-use, RFC 9700 §4.14) is spent once and a sign-in happens once. A refresh
    /// the provider refuses (`invalid_grant`: revoked, expired or already used) forgets
    /// those tokens and signs in; any other failure is thrown.
    ///
    /// `rejected`: tokens a resource server just refused (401 `invalid_token`, RFC 6750
    /// §3.1) although they had not expired — revoked at the provider, say. Kept tokens with
    /// the same access token are then refreshed (or replaced by a sign-in), not handed out
    /// again.
    ///
    /// `resource`: tokens for that protected resource alone (RFC 8707 §2, in
    /// ``ResourceIndicator`` form), asked for at `/authorize`, `/token` and every refresh,
    /// and kept apart from the provider's own tokens and other resources' (a token for one
    /// resource never answers a request for another).
    public func validTokens(
        issuer: URL,
        clientID: String,
        redirectURI: URL,
        scopes: [String] = [OAuthScope.openID],
        credential: String? = nil,
        proofOfPossession: ProofOfPossession? = nil,
        minimumValidity: TimeInterval = 30,
        rejected: Tokens? = nil,
        resource: ResourceIndicator? = nil
    ) async throws -> Tokens {
        try await tokenCache.validTokens(
            issuer: issuer, clientID: clientID, redirectURI: redirectURI, scopes: scopes, credential: credential, proofOfPossession: proofOfPossession,
            minimumValidity: minimumValidity, rejected: rejected, resource: resource?.uri
        )
    }

    /// What ``logout(issuer:clientID:credential:)`` did.
    public struct Logout: Sendable {
        /// Cached sign-ins forgotten.
        public var forgotten: Int
        /// Revocations that failed (the provider was unreachable or refused): those tokens
        /// were forgotten here all the same, and stay valid at the provider until they expire.
        public var revocationFailures: [LatchkeyError]
    }

    /// Revokes the cached tokens of `issuer` at the provider (RFC 7009 §2.1: the refresh
    /// token, which ends the grant, then the access token) and forgets them; with
    /// `clientID` or `credential`, only those. Tokens are forgotten even when revocation
    /// fails (the result lists the failures): after a logout, nothing on this host can
    /// use them.
    public func logout(issuer: URL, clientID: String? = nil, credential: String? = nil) async throws -> Logout {
        try await tokenCache.logout(issuer: issuer, clientID: clientID, credential: credential)
    }

    // MARK: Presenting tokens

    /// Adds the access token of `tokens` to `request`: `Authorization: Bearer`, or, for
    /// tokens bound to a DPoP key, `Authorization: DPoP` and a `DPoP` proof for this
    /// method and URL with the token's hash (RFC 9449 §7.1), carrying the last nonce the
    /// URL's origin sent. For one request made by the app's own HTTP stack; see
    /// ``transport(for:)`` for one that also answers nonce challenges.
    ///
    /// This call does not check where the request goes: the app decides, and a bearer
    /// token is good for whoever receives it. Check the URL against
    /// ``resourceOrigins(for:)`` first unless the app has its own list
    /// (docs/SECURITY.md, "Where tokens go").
    public func authorize(request: TransportRequest, with tokens: Tokens) throws -> TransportRequest {
        try dpopKeys.authorize(request: request, with: tokens)
    }

    /// A transport that presents `tokens` on every request (`AccessTokenTransport` in LatchkeyOAuth):
    /// bearer, or DPoP with a fresh proof each time and one retry on a `use_dpop_nonce`
    /// challenge (RFC 9449 §9). It sends through the configuration's transport with its
    /// request timeout, and only to ``resourceOrigins(for:)``: a request for another
    /// origin is refused before it is sent (`OAuthError.Code.originNotAllowed`).
    public func transport(for tokens: Tokens) -> any HTTPTransport {
        dpopKeys.transport(for: tokens)
    }

    /// Sends `request` to a protected resource that says where its tokens come from
    /// (RFC 9728), as MCP clients do:
    ///
    /// 1. the request goes out without a token; any answer but a 401 whose challenge names
    ///    `resource_metadata` (§5.1) is returned as it is;
    /// 2. the resource's metadata is read from its own origin, no redirect followed, and
    ///    must describe the URL called (§3.3: its `resource` is that URL or above it);
    /// 3. the first authorization server it names that is among
    ///    ``ProtectedResourceAccess/allowedProviders`` is used; when none is, the call ends
    ///    with ``LatchkeyError/Code/domainNotAllowed`` and nothing is sent to them (§7.6);
    /// 4. tokens for that resource alone (RFC 8707) come from
    ///    ``validTokens(issuer:clientID:redirectURI:scopes:credential:proofOfPossession:minimumValidity:rejected:resource:)``
    ///    (kept, refreshed, or a sign-in with this device's passkey), with the scopes the
    ///    challenge names, else the access's;
    /// 5. the request is sent again with them, to the resource's origin only; kept tokens
    ///    refused as `invalid_token` are replaced once more, never a third time.
    public func send(_ request: TransportRequest, to access: ProtectedResourceAccess) async throws -> ProtectedResourceResponse {
        try await protectedResources.send(request, access: access)
    }

    /// Where `tokens` may be presented: the issuer's origin and
    /// ``Configuration/allowedResourceOrigins`` (docs/SECURITY.md, "Where tokens go").
    public func resourceOrigins(for tokens: Tokens) -> Set<WebOrigin> {
        dpopKeys.resourceOrigins(for: tokens)
    }

    // MARK: Binding

    /// Binds a new credential from a bind URL (docs/PROTOCOL.md section 2), in either
    /// form: `https://<idp>/v1/bind/<job>?token=<t>` or the deep link
    /// `<scheme>://bind?api_base_url=<idp>&job_id=<job>&token=<t>`.
    ///
    /// Fetches the job (answering any steps, such as `verify-code`, through the step
    /// handler), creates a key pair in the vault for the creation options (WebAuthn §5.1.3
    /// client steps: RP ID checked against the provider's origin), and submits the
    /// registration. If the provider refuses it, the new key is deleted again, so a failed
    /// bind leaves nothing behind.
    ///
    /// Errors: ``LatchkeyError/Code/notABindURL``, ``LatchkeyError/Code/domainNotAllowed``
    /// (before any request), ``LatchkeyError/Code/providerError`` (expired or used link,
    /// wrong codes), ``LatchkeyError/Code/stepUnsupported``, ``LatchkeyError/Code/vault``.
    public func registerCredential(from url: URL) async throws -> BoundCredential {
        try await credentialStore.registerCredential(from: url)
    }

    /// ``registerCredential(from:)``, asking first: `confirm` is given what the bind job
    /// asks for (the provider, and the account it names) once the job is read and before
    /// any key is made; false ends the bind with ``LatchkeyError/Code/cancelled`` and the
    /// link unused. For a link a person clicked rather than typed (`latchkey open`).
    public func registerCredential(from url: URL, confirm: @escaping @Sendable (BindRequest) async -> Bool) async throws -> BoundCredential {
        try await credentialStore.registerCredential(from: url, confirm: confirm)
    }

    // MARK: Transfers

    /// Exports credential `id` to another device. The stream reports the code (and each
    /// rotation of it), the importing device when one asks, and the outcome. Approval is
    /// the step handler's answer to `confirm-import`, given the device name and key
    /// fingerprint; the approval is an assertion whose challenge binds that exact key.
    ///
    /// Stopping the iteration (or cancelling its task) cancels the transfer at the provider.
    /// Errors end the stream as ``LatchkeyError``s.
    public func exportCredential(id: String) -> AsyncThrowingStream<ExportEvent, any Error> {
        transfers.exportCredential(id: id)
    }

    /// Imports a credential with a code shown by the exporting device: redeems the code at
    /// `issuer`, creates a new key in this vault for the same identity, submits it with
    /// `deviceName`, and waits for the exporter's approval. Returns the new credential(s).
    /// A declined, expired or cancelled transfer deletes the new key again.
    public func importCredential(code: String, deviceName: String, issuer: URL) async throws -> [Credential] {
        try await transfers.importCredential(code: code, deviceName: deviceName, issuer: issuer)
    }

    // MARK: Enrollment

    /// Signs up at `issuer` as `username`: the provider's `enroll-profile` step is
    /// answered from `profile` (the step handler is asked only for required fields that
    /// are missing), its `verify-code` step by the step handler (the code went to the
    /// e-mail address given), and the resulting bind link is followed. Returns the new
    /// credential; sign in with it right away.
    public func signUp(issuer: URL, username: String, profile: [ProfileField: String] = [:]) async throws -> Credential {
        try await enrollments.signUp(issuer: issuer, username: username, profile: profile)
    }

    /// Recovers `username`'s account at `issuer` after losing every device: the provider
    /// sends a code to the account's e-mail (the step handler's `verify-code` answers it)
    /// and answers a recovery bind link. Binding through it revokes the account's other
    /// credentials; those in this vault are marked revoked. Returns the new credential.
    public func recover(issuer: URL, username: String) async throws -> Credential {
        try await enrollments.recover(issuer: issuer, username: username)
    }

    // MARK: The device grant

    /// Signs in on a device with no way to sign in itself, against any provider with a
    /// `device_authorization_endpoint`: the stream reports the code to show, each poll
    /// that finds the person undecided or asks to slow down, and the validated tokens
    /// (kept in the vault for ``validTokens(issuer:clientID:redirectURI:scopes:credential:proofOfPossession:minimumValidity:rejected:)``).
    /// A denial or an expired code ends the stream with ``LatchkeyError/Code/deviceAccessDenied``
    /// or ``LatchkeyError/Code/deviceCodeExpired``. With `dpop`, the tokens are bound to a
    /// DPoP key kept in the vault (RFC 9449). A client key for `clientID` at `issuer`, if
    /// there is one, authenticates the client (`private_key_jwt`); else it is public.
    ///
    /// Stopping the iteration cancels the polling.
    public func deviceAuthorization(
        issuer: URL, clientID: String, scopes: [String] = [OAuthScope.openID], dpop: Bool = false
    ) -> AsyncThrowingStream<DeviceAuthorizationEvent, any Error> {
        deviceGrant.deviceAuthorization(issuer: issuer, clientID: clientID, scopes: scopes, dpop: dpop)
    }

    /// Approves or denies a device's sign-in (RFC 8628) at a Latchkey provider where this
    /// vault holds a credential: looks the user code up, hands what the device asked for
    /// to `confirm` (which must show it, and returns whether to go on), and signs the
    /// decision with the credential — an assertion over a challenge bound to that code.
    /// Returns false when `confirm` declined (nothing was sent after the lookup).
    @discardableResult
    public func approveDevice(
        issuer: URL, userCode: String, decision: DeviceDecision = .approve, credential requested: String? = nil,
        confirm: @Sendable (DeviceApprovalRequest) async throws -> Bool
    ) async throws -> Bool {
        try await deviceGrant.approveDevice(issuer: issuer, userCode: userCode, decision: decision, credential: requested, confirm: confirm)
    }

    // MARK: Client keys

    /// The client key for `clientID` at `issuer`, made now when there is none (ES256,
    /// protected as ``Configuration/keyProtection`` says; under the vault's `client-keys`
    /// lock, so two processes never make two). The same key is returned every time after.
    public func clientKey(issuer: URL, clientID: String) async throws -> ClientKey {
        try await clientKeys.clientKey(issuer: issuer, clientID: clientID)
    }

    /// The client key for `clientID` at `issuer`, or nil; nothing is made.
    public func existingClientKey(issuer: URL, clientID: String) throws -> ClientKey? {
        try clientKeys.existingClientKey(issuer: issuer, clientID: clientID)
    }

    /// Deletes the client key with its kept tokens and their DPoP key; false when there
    /// was none. The provider keeps the public
    /// key registered until its operator removes it: it can verify nothing new.
    @discardableResult
    public func deleteClientKey(issuer: URL, clientID: String) throws -> Bool {
        try clientKeys.deleteClientKey(issuer: issuer, clientID: clientID)
    }

    /// Tokens for the client itself (RFC 6749 §4.4), authenticated by its client key
    /// (``clientKey(issuer:clientID:)``, which must exist and be registered at the
    /// provider): no person, so no ID token and no refresh token. `audience` is the
    /// assertions' `aud` (the issuer identifier unless the provider demands its token
    /// endpoint); with `dpop` the token is bound to a DPoP key of its own, kept in the
    /// vault beside the client key and never the client key itself.
    ///
    /// Tokens are kept in the vault per (issuer, client, scope set) and handed out again
    /// while good for `minimumValidity` seconds more, under the vault's `tokens` lock (so
    /// processes arriving together ask the provider once); `rejected` — a token a resource
    /// server just refused — is never handed out again.
    public func clientCredentials(
        issuer: URL, clientID: String, scopes: [String]? = nil, audience: ClientAssertion.Audience = .issuer, dpop: Bool = false,
        minimumValidity: TimeInterval = 30, rejected: Tokens? = nil
    ) async throws -> Tokens {
        try await clientKeys.clientCredentials(issuer: issuer, clientID: clientID, scopes: scopes, audience: audience, dpop: dpop, minimumValidity: minimumValidity, rejected: rejected)
    }

    // MARK: Signing in to this host

    /// Asks a person to approve a sign-in to this host from a device that holds their
    /// passkey (`pam_latchkey`; docs/PROTOCOL.md section 13): an RFC 8628 device
    /// authorization authenticated with this host's client key for `clientID` (which
    /// must exist and be registered with the device grant), carrying `request` as a
    /// `latchkey_pam_login` authorization detail (RFC 9396) the approver is shown.
    /// `events` hears the code to show (`.code`) and each poll. Answers who approved,
    /// from a validated ID token whose `auth_time` is this approval's and `/userinfo`;
    /// the access token is revoked and nothing is kept. A denial, an expired code or a
    /// provider that cannot be reached throw (``LatchkeyError/Code-swift.struct/deviceAccessDenied``,
    /// ``LatchkeyError/Code-swift.struct/deviceCodeExpired``, ``LatchkeyError/Code-swift.struct/network``).
    public func approveHostLogin(
        issuer: URL, clientID: String, request: HostLoginRequest, events: @escaping @Sendable (DeviceAuthorizationEvent) -> Void = { _ in }
    ) async throws -> HostLoginApproval {
        try await hostLogins.approve(issuer: issuer, clientID: clientID, request: request, events: events)
    }

    // MARK: SSH

    /// An OpenSSH certificate from `issuer`'s SSH CA (docs/PROTOCOL.md section 12) for an
    /// SSH key kept in the vault, made the first time (Ed25519 in software, P-256 in the
    /// TPM, as ``Configuration/keyProtection`` says): tokens with the `ssh` scope (kept ones
    /// when they still do, else a sign-in), a proof by the key over the request, and the
    /// certificate, checked to be for this key and kept beside it, where the agent's
    /// ssh-agent socket serves both (``KeyAgent/listenSSH(at:environment:)``).
    /// `principals` nil asks for every granted one; `lifetime` nil for the provider's.
    public func sshLogin(issuer: URL, clientID: String, redirectURI: URL, principals: [String]? = nil, lifetime: Int? = nil) async throws -> SSHLogin {
        try await sshCertificates.login(issuer: issuer, source: .signIn(clientID: clientID, redirectURI: redirectURI), principals: principals, lifetime: lifetime)
    }

    /// An OpenSSH certificate for a service rather than a person: the client `clientID`'s
    /// own SSH key (one per provider and client, made the first time), certified with the
    /// client's DPoP-bound client credentials tokens of scope `ssh`
    /// (``clientCredentials(issuer:clientID:scopes:audience:dpop:minimumValidity:rejected:)``;
    /// its client key must exist and be registered). The provider names only the
    /// principals an admin granted the client (`latchkey admin set-ssh-principals
    /// --client`), none by default (docs/PROTOCOL.md section 12).
    public func sshLogin(issuer: URL, clientCredentials clientID: String, principals: [String]? = nil, lifetime: Int? = nil) async throws -> SSHLogin {
        try await sshCertificates.login(issuer: issuer, source: .clientCredentials(clientID: clientID), principals: principals, lifetime: lifetime)
    }

    /// The vault's SSH keys and their last certificates (``sshLogin(issuer:clientID:redirectURI:principals:lifetime:)``).
    public func sshKeys() throws -> [SSHKeyListing] {
        try sshCertificates.listing()
    }
}
