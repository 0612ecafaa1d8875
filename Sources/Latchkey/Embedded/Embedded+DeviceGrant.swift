public import Foundation
import LatchkeyCrypto
public import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyWebAuthn
import Logging

/// The device authorization grant (RFC 8628), both sides: a headless device signing a
/// person in (``deviceAuthorization(issuer:clientID:scopes:dpop:)``), and a device that
/// holds a passkey approving it (``approveDevice(issuer:userCode:decision:credential:confirm:)``,
/// against a Latchkey provider; docs/PROTOCOL.md section 7).
extension Embedded {
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
        let (stream, continuation) = AsyncThrowingStream<DeviceAuthorizationEvent, any Error>.makeStream()
        let flow = flow("deviceAuthorization")
        let task = Task {
            do {
                try await flow.run {
                    try await runDeviceAuthorization(flow, issuer: issuer, clientID: clientID, scopes: scopes, dpop: dpop) { continuation.yield($0) }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    private func runDeviceAuthorization(
        _ flow: FlowContext, issuer: URL, clientID: String, scopes: [String], dpop: Bool, emit: @escaping @Sendable (DeviceAuthorizationEvent) -> Void
    ) async throws {
        let provider = try sessions.provider(issuer)
        guard !clientID.isEmpty, clientID.utf8.count <= 256 else {
            throw LatchkeyError.invalidArgument(reason: "the client id must be 1 to 256 characters")
        }
        let client = try deviceGrantClient(provider, clientID: clientID)
        let record = try await deviceGrantKey()
        let proof = dpop ? try dpopSigner(record) : nil
        let issuedAt = Date()
        let authorization = try await client.deviceAuthorization(scopes: scopes)
        emit(.code(DeviceCodePrompt(
            userCode: authorization.userCode, verificationURI: authorization.verificationURI,
            verificationURIComplete: authorization.verificationURIComplete,
            expiresAt: issuedAt.addingTimeInterval(TimeInterval(authorization.expiresIn)),
            interval: authorization.interval ?? DeviceAuthorizationResponse.defaultInterval
        )))
        let tokenSet = try await client.deviceTokens(for: authorization, issuedAt: issuedAt, dpop: proof) { outcome, polling in
            emit(outcome == .pending ? .pending : .slowDown(interval: polling.interval))
        }
        if dpop, !tokenSet.isDPoPBound {
            throw LatchkeyError.dpopNotBound(reason: "\(provider.issuer) issued \(tokenSet.tokenType) tokens where DPoP-bound ones were asked for: it does not support DPoP (RFC 9449)")
        }
        flow.emit(.tokensReceived)
        let tokens = Tokens(tokenSet: tokenSet, issuer: provider.base, clientID: clientID, redirectURI: provider.base, dpop: proof)
        if configuration.cachesTokens {
            do {
                try authenticator.vault.updateMetadata(record.handle) { data in
                    guard var current = DPoPKeyRecord.decode(data) else { throw LatchkeyError.vault(reason: "the DPoP key record is unreadable") }
                    data = try current.keep(CachedTokens(deviceGrant: tokens, issuer: provider.issuer, scopes: scopes))
                }
            } catch {
                flow.logger.warning("device sign-in tokens not kept in the vault", metadata: [LogField.error.rawValue: .string(String(describing: error))])
            }
        }
        emit(.signedIn(tokens))
    }

    /// The OAuth client for a device grant: authenticated with the client key when this
    /// vault holds one for the client, public otherwise.
    func deviceGrantClient(_ provider: ProviderAddress, clientID: String) throws -> OAuthClient {
        var authentication = OAuthClient.ClientAuthentication.none
        if let key = try existingClientKey(issuer: provider.base, clientID: clientID) {
            let vault = authenticator.vault
            let handle = key.handle
            let entry = try vault.entry(handle)
            authentication = .privateKeyJWT(try ClientAssertionSigner(publicKey: entry.publicKey) { try vault.sign($0, with: handle) })
        }
        return try sessions.makeClient(provider, clientID: clientID, redirectURI: provider.base, authentication: authentication)
    }

    /// The vault record that keeps device sign-ins' tokens and their DPoP key (one per
    /// vault; there is no credential on this host to keep them with).
    func deviceGrantKey() async throws -> VaultEntry {
        let protection = keyProtectionForNewCredentials().protection
        return try await dpopKey(owner: DPoPKeyRecord.deviceGrantOwner, protection: protection)
    }

    /// The device sign-ins kept for this issuer and client that cover `scopes`, newest first.
    func cachedDeviceTokens(provider: ProviderAddress, clientID: String, scopes: [String]) throws -> (entry: VaultEntry, tokens: [Tokens])? {
        guard let (entry, record) = try dpopKeyRecords().first(where: { $0.record.credential == DPoPKeyRecord.deviceGrantOwner }) else { return nil }
        let signer = try dpopSigner(entry)
        let tokens = record.tokens.reversed()
            .filter { $0.fits(deviceGrantOf: provider.issuer, clientID: clientID, scopes: scopes) }
            .compactMap { $0.tokens(issuerURL: provider.base, dpop: signer, credentialID: nil) }
        return (entry, tokens)
    }

    // MARK: Approving another device

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
        let flow = flow("approveDevice")
        return try await flow.run {
            guard let code = DeviceUserCode.normalise(userCode) else {
                throw LatchkeyError.invalidArgument(reason: "a user code is 8 letters like BCDF-GHJK (consonants only)")
            }
            let provider = try sessions.provider(issuer)
            let conversation = ProviderConversation(flow: flow, provider: provider, transport: transport)
            let asked = try await conversation.settle(
                conversation.post(provider.url(ProtocolPath.deviceApproval), DeviceApprovalExchange.Lookup(userCode: DeviceUserCode.display(code)))
            ).decode(DeviceApprovalExchange.Request.self, "device sign-in request")
            let dates = ISO8601DateFormatter()
            let request = DeviceApprovalRequest(
                userCode: try ProviderConversation.bounded(asked.userCode, "userCode", maximumLength: 64),
                clientID: try ProviderConversation.bounded(asked.clientID, "clientID", maximumLength: 256),
                clientName: try ProviderConversation.bounded(asked.clientName, "clientName", maximumLength: 256),
                scopes: Array(asked.scope.prefix(64)), requestedAt: dates.date(from: asked.requestedAt),
                requestedFrom: String(asked.requestedFrom.prefix(256)), expiresAt: dates.date(from: asked.expiresAt)
            )
            guard try await confirm(request) else { return false }
            let submit = try conversation.url(asked.submit, named: "submit")
            let candidates = try authenticator.candidates(for: asked.publicKey, origin: provider.origin)
                .map(Credential.init)
                .filter { $0.belongs(to: provider) && $0.state != .pending }
                .sorted(by: Credential.oldestFirst)
            let chosen = try await choose(from: candidates, requested: requested, provider: provider, flow: flow)
            flow.emit(.credentialChosen(chosen.id))
            let (assertion, _) = try authenticator.getAssertion(asked.publicKey, origin: provider.origin, credentialID: chosen.credentialID)
            let choice: DeviceApprovalExchange.Choice = decision == .approve ? .approve : .deny
            _ = try await conversation.settle(conversation.post(submit, DeviceApprovalExchange.Decision(decision: choice, credential: assertion)))
                .decode(DeviceApprovalExchange.Decided.self, "approval decision")
            return true
        }
    }
}
