#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyProtocol
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyWebAuthn
import Logging
import Synchronization

struct TokenCacheService: EmbeddedService {
    let core: EmbeddedCore
}

extension TokenCacheService {
    /// The work of `Embedded.validTokens`, which documents it.
    func validTokens(
        issuer: URL,
        clientID: String,
        redirectURI: URL,
        scopes: [String] = [OAuthScope.openID],
        credential: String? = nil,
        proofOfPossession: ProofOfPossession? = nil,
        minimumValidity: TimeInterval = 30,
        rejected: Tokens? = nil,
        resource: String? = nil
    ) async throws -> Tokens {
        let flow = flow("validTokens")
        let pop = proofOfPossession ?? configuration.proofOfPossession
        return try await flow.run {
            let session = try sessions.session(issuer: issuer, clientID: clientID, redirectURI: redirectURI)
            let provider = session.provider
            return try await authenticator.vault.withExclusiveAccess("tokens") {
                if let cached = try cachedTokens(provider: provider, clientID: clientID, redirectURI: redirectURI, scopes: scopes, credential: credential, resource: resource)
                    .first(where: { pop == .none || $0.tokens.dpop != nil })
                {
                    let refused = rejected.map { ConstantTime.isEqual(Data($0.accessToken.utf8), Data(cached.tokens.accessToken.utf8)) } ?? false
                    if cached.tokens.isValid(for: minimumValidity), !refused {
                        flow.logger.debug("tokens from the cache", metadata: ["provider": .string(provider.issuer)])
                        return cached.tokens
                    }
                    if cached.tokens.refreshToken != nil {
                        do {
                            let refreshed = try await session.client.refresh(cached.tokens.tokenSet, resource: resource, dpop: cached.tokens.dpop)
                            flow.emit(.tokensReceived)
                            let tokens = Tokens(
                                tokenSet: refreshed, issuer: cached.tokens.issuer, clientID: clientID, redirectURI: redirectURI,
                                dpop: cached.tokens.dpop, credentialID: cached.credential.id, resource: resource
                            )
                            await keep(tokens, scopes: nil, credential: cached.credential, flow: flow)
                            return tokens
                        } catch let error as OAuthError where error.providerError?.error == .invalidGrant {
                            flow.logger.debug("cached refresh token refused; signing in", metadata: ["provider": .string(provider.issuer)])
                            forget(credential: cached.credential) {
                                $0.fits(issuer: provider.issuer, clientID: clientID, redirectURI: redirectURI, scopes: [], resource: resource)
                            }
                        }
                    }
                }
                // A device sign-in's tokens are the provider's own: never for a resource.
                if credential == nil, resource == nil, let device = try await deviceGrantTokens(
                    flow, provider: provider, clientID: clientID, scopes: scopes, dpop: pop == .dpop, minimumValidity: minimumValidity, rejected: rejected
                ) {
                    return device
                }
                return try await signIns.signInForTokens(flow, session: session, scopes: scopes, credential: credential, proofOfPossession: pop, resource: resource)
            }
        }
    }

    /// Kept tokens of a device sign-in (``deviceAuthorization(issuer:clientID:scopes:dpop:)``)
    /// for this issuer and client: valid ones, or those refreshed and kept again; nil when
    /// there are none (or their refresh token was refused, when they are forgotten).
    private func deviceGrantTokens(
        _ flow: FlowContext, provider: ProviderAddress, clientID: String, scopes: [String], dpop: Bool, minimumValidity: TimeInterval, rejected: Tokens?
    ) async throws -> Tokens? {
        guard let (entry, kept) = try deviceGrant.cachedDeviceTokens(provider: provider, clientID: clientID, scopes: scopes),
              let cached = kept.first(where: { !dpop || $0.dpop != nil })
        else { return nil }
        let refused = rejected.map { ConstantTime.isEqual(Data($0.accessToken.utf8), Data(cached.accessToken.utf8)) } ?? false
        if cached.isValid(for: minimumValidity), !refused { return cached }
        guard cached.refreshToken != nil else { return nil }
        // Refreshed as the device signed in: with its client key when it has one.
        let client = try deviceGrant.deviceGrantClient(provider, clientID: clientID)
        let matches: (CachedTokens) -> Bool = { $0.accessToken == cached.accessToken }
        do {
            let refreshed = try await client.refresh(cached.tokenSet, dpop: cached.dpop)
            flow.emit(.tokensReceived)
            let tokens = Tokens(tokenSet: refreshed, issuer: provider.base, clientID: clientID, redirectURI: provider.base, dpop: cached.dpop)
            if configuration.cachesTokens {
                try authenticator.vault.updateMetadata(entry.handle) { data in
                    guard var current = DPoPKeyRecord.decode(data) else { return }
                    let scopes = current.tokens.first(where: matches)?.scopes ?? scopes
                    current.tokens.removeAll(where: matches)
                    data = try current.keep(CachedTokens(deviceGrant: tokens, issuer: provider.issuer, scopes: scopes))
                }
            }
            return tokens
        } catch let error as OAuthError where error.providerError?.error == .invalidGrant {
            try? removeKept(from: entry.handle, where: matches)
            return nil
        }
    }

    /// The work of `Embedded.logout`, which documents it.
    func logout(issuer: URL, clientID: String? = nil, credential: String? = nil) async throws -> Embedded.Logout {
        let flow = flow("logout")
        return try await flow.run {
            let provider = try sessions.provider(issuer)
            return try await authenticator.vault.withExclusiveAccess("tokens") {
                var result = Embedded.Logout(forgotten: 0, revocationFailures: [])
                let entries = try authenticator.vault.entries()
                let credentials = credentialStore.storedCredentials(in: entries).filter { $0.belongs(to: provider) && (credential == nil || $0.id == credential) }
                for (entry, record) in dpopKeys.dpopKeyRecords(in: entries) {
                    let deviceSignIns = credential == nil && record.credential == DPoPKeyRecord.deviceGrantOwner
                    guard deviceSignIns || credentials.contains(where: { $0.handle.rawValue == record.credential }) else { continue }
                    let leaving = record.tokens.filter { $0.issuer == provider.issuer && (clientID == nil || $0.clientID == clientID) }
                    guard !leaving.isEmpty else { continue }
                    for cached in leaving {
                        do {
                            guard let redirect = URL(string: cached.redirectURI) else { continue }
                            let client = try sessions.session(provider, clientID: cached.clientID, redirectURI: redirect).client
                            if let refreshToken = cached.refreshToken { try await client.revoke(refreshToken, hint: .refreshToken) }
                            try await client.revoke(cached.accessToken, hint: .accessToken)
                        } catch {
                            result.revocationFailures.append(LatchkeyError.wrapping(error))
                        }
                    }
                    try removeKept(from: entry.handle) { $0.issuer == provider.issuer && (clientID == nil || $0.clientID == clientID) }
                    result.forgotten += leaving.count
                }
                return result
            }
        }
    }

    // MARK: Keeping tokens

    /// The cached tokens that answer a request, newest first, with the credential each
    /// belongs to. Credentials revoked by the provider are skipped.
    func cachedTokens(
        provider: ProviderAddress, clientID: String, redirectURI: URL, scopes: [String], credential requested: String?, resource: String? = nil
    ) throws -> [(tokens: Tokens, credential: Credential)] {
        // One listing for both (through an agent, each listing is a round trip).
        let entries = try authenticator.vault.entries()
        let credentials = credentialStore.storedCredentials(in: entries).filter {
            $0.belongs(to: provider) && $0.state != .revoked && (requested == nil || $0.id == requested)
        }
        var found: [(tokens: Tokens, credential: Credential, storedAt: Double)] = []
        for (entry, record) in dpopKeys.dpopKeyRecords(in: entries) {
            guard let owner = credentials.first(where: { $0.handle.rawValue == record.credential }) else { continue }
            for cached in record.tokens where cached.fits(issuer: provider.issuer, clientID: clientID, redirectURI: redirectURI, scopes: scopes, resource: resource) {
                // Only bound tokens carry their key's signer: making one hashes the key's
                // JWK (RFC 7638), which a bearer token handed out from the cache (`latchkey
                // token`) has no need to pay for.
                let signer = cached.isDPoPBound ? try dpopKeys.dpopSigner(entry) : nil
                if let tokens = cached.tokens(issuerURL: provider.base, dpop: signer, credentialID: owner.id) {
                    found.append((tokens, owner, cached.storedAt))
                }
            }
        }
        return found.sorted { $0.storedAt > $1.storedAt }.map { ($0.tokens, $0.credential) }
    }

    /// Keeps `tokens` in `credential`'s DPoP key record, replacing what it held for the
    /// same client (`scopes` nil: keep the scopes recorded before). A failure is logged,
    /// not thrown: the caller has its tokens, and only the next call pays for it.
    func keep(_ tokens: Tokens, scopes: [String]?, credential: Credential, flow: FlowContext, in entry: VaultEntry? = nil) async {
        guard configuration.cachesTokens else { return }
        do {
            let provider = try ProviderAddress(tokens.issuer)
            let keep = { (handle: KeyHandle) in
                _ = try self.authenticator.vault.updateMetadata(handle) { data in
                    guard var record = DPoPKeyRecord.decode(data) else {
                        throw LatchkeyError.vault(reason: "the DPoP key record is unreadable")
                    }
                    let previous = record.tokens.first {
                        $0.issuer == provider.issuer && $0.clientID == tokens.clientID && $0.redirectURI == tokens.redirectURI.absoluteString && $0.resource == tokens.resource
                    }
                    data = try record.keep(CachedTokens(tokens, issuer: provider.issuer, scopes: scopes ?? previous?.scopes ?? []))
                }
            }
            if let entry {
                try keep(entry.handle)
            } else if let known = core.dpopKeyHandles.withLock({ $0[credential.handle] }) {
                do {
                    try keep(known)
                } catch let error as KeyVaultError where error.code == .keyNotFound {
                    // Deleted since: found (or made) again.
                    _ = core.dpopKeyHandles.withLock { $0.removeValue(forKey: credential.handle) }
                    try keep(try await dpopKeys.dpopKey(for: credential).handle)
                }
            } else {
                // A bearer sign-in's tokens may be the first kept: the record is made for
                // them (a DPoP key comes with it, for the credential's later bound sign-ins).
                try keep(try await dpopKeys.dpopKey(for: credential).handle)
            }
        } catch {
            flow.logger.warning("tokens not kept in the vault", metadata: [LogField.error.rawValue: .string(String(describing: error))])
        }
    }

    /// Forgets what `credential` keeps that `matches`.
    func forget(credential: Credential, where matches: (CachedTokens) -> Bool) {
        guard let records = try? dpopKeys.dpopKeyRecords() else { return }
        for (entry, record) in records where record.credential == credential.handle.rawValue && record.tokens.contains(where: matches) {
            try? removeKept(from: entry.handle, where: matches)
        }
    }

    /// Removes the kept tokens that `matches` from one DPoP key record, under the vault's
    /// write lock (what another process kept meanwhile stays).
    private func removeKept(from handle: KeyHandle, where matches: (CachedTokens) -> Bool) throws {
        try authenticator.vault.updateMetadata(handle) { data in
            guard var current = DPoPKeyRecord.decode(data) else { return }
            current.tokens.removeAll(where: matches)
            data = try current.encoded()
        }
    }
}
