#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyWebAuthn
import Logging

/// The device authorization grant (RFC 8628), both sides: a headless device signing a
/// person in (``deviceAuthorization(issuer:clientID:scopes:dpop:)``), and a device that
/// holds a passkey approving it (``approveDevice(issuer:userCode:decision:credential:confirm:)``,
/// against a Latchkey provider; docs/PROTOCOL.md section 7).
struct DeviceGrantService: EmbeddedService {
    let core: EmbeddedCore
}

extension DeviceGrantService {
    /// The work of `Embedded.deviceAuthorization`, which documents it.
    func deviceAuthorization(
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
        let proof = dpop ? try dpopKeys.dpopSigner(record) : nil
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
        if let key = try clientKeys.existingClientKey(issuer: provider.base, clientID: clientID) {
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
        let protection = credentialStore.keyProtectionForNewCredentials().protection
        return try await dpopKeys.dpopKey(owner: DPoPKeyRecord.deviceGrantOwner, protection: protection)
    }

    /// The device sign-ins kept for this issuer and client that cover `scopes`, newest first.
    func cachedDeviceTokens(provider: ProviderAddress, clientID: String, scopes: [String]) throws -> (entry: VaultEntry, tokens: [Tokens])? {
        guard let (entry, record) = try dpopKeys.dpopKeyRecords().first(where: { $0.record.credential == DPoPKeyRecord.deviceGrantOwner }) else { return nil }
        let signer = try dpopKeys.dpopSigner(entry)
        let tokens = record.tokens.reversed()
            .filter { $0.fits(deviceGrantOf: provider.issuer, clientID: clientID, scopes: scopes) }
            .compactMap { $0.tokens(issuerURL: provider.base, dpop: signer, credentialID: nil) }
        return (entry, tokens)
    }

    // MARK: Approving another device

    /// The work of `Embedded.approveDevice`, which documents it.
    func approveDevice(
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
            // ISO8601FormatStyle, not ISO8601DateFormatter: the latter brings ICU's data
            // (30 MiB) into every binary that links this module.
            let date = { (text: String) in try? Date.ISO8601FormatStyle().parse(text) }
            let request = DeviceApprovalRequest(
                userCode: try ProviderConversation.bounded(asked.userCode, "userCode", maximumLength: 64),
                clientID: try ProviderConversation.bounded(asked.clientID, "clientID", maximumLength: 256),
                clientName: try ProviderConversation.bounded(asked.clientName, "clientName", maximumLength: 256),
                scopes: Array(asked.scope.prefix(64)), requestedAt: date(asked.requestedAt),
                requestedFrom: String(asked.requestedFrom.prefix(256)), expiresAt: date(asked.expiresAt),
                hostLogin: try asked.login.map { login in
                    // The provider's words, checked as the provider checks them.
                    if let problem = login.problem { throw LatchkeyError.malformedResponse(reason: "the host sign-in the provider describes: \(problem)") }
                    return DeviceApprovalRequest.HostLogin(user: login.user, service: login.service, remoteHost: login.remoteHost)
                }
            )
            guard try await confirm(request) else { return false }
            let submit = try conversation.url(asked.submit, named: "submit")
            let candidates = try authenticator.candidates(for: asked.publicKey, origin: provider.origin)
                .map(Credential.init)
                .filter { $0.belongs(to: provider) && $0.state != .pending }
                .sorted(by: Credential.oldestFirst)
            let chosen = try await signIns.choose(from: candidates, requested: requested, provider: provider, flow: flow)
            flow.emit(.credentialChosen(chosen.id))
            let (assertion, _) = try authenticator.getAssertion(asked.publicKey, origin: provider.origin, credentialID: chosen.credentialID)
            let choice: DeviceApprovalExchange.Choice = decision == .approve ? .approve : .deny
            _ = try await conversation.settle(conversation.post(submit, DeviceApprovalExchange.Decision(decision: choice, credential: assertion)))
                .decode(DeviceApprovalExchange.Decided.self, "approval decision")
            return true
        }
    }
}
