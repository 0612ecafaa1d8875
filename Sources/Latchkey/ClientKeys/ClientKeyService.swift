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

struct ClientKeyService: EmbeddedService {
    let core: EmbeddedCore
}

extension ClientKeyService {
    /// The work of `Embedded.clientKey`, which documents it.
    func clientKey(issuer: URL, clientID: String) async throws -> ClientKey {
        do {
            let address = try clientKeyAddress(issuer)
            if let existing = try existingClientKey(issuer: address.base, clientID: clientID) { return existing }
            let vault = authenticator.vault
            let protection = credentialStore.keyProtectionForNewCredentials().protection
            return try await vault.withExclusiveAccess("client-keys") {
                if let existing = try existingClientKey(issuer: address.base, clientID: clientID) { return existing }
                let record = ClientKeyRecord(issuer: address.issuer, clientID: clientID)
                let entry = try vault.createKey(.es256, metadata: record.encoded(), protection: protection)
                return try clientKey(entry, record)
            }
        } catch {
            throw LatchkeyError.wrapping(error)
        }
    }

    /// The work of `Embedded.existingClientKey`, which documents it.
    func existingClientKey(issuer: URL, clientID: String) throws -> ClientKey? {
        do {
            let address = try clientKeyAddress(issuer)
            guard let (entry, record) = try clientKeyRecords().first(where: { $0.record.issuer == address.issuer && $0.record.clientID == clientID }) else {
                return nil
            }
            return try clientKey(entry, record)
        } catch {
            throw LatchkeyError.wrapping(error)
        }
    }

    /// The work of `Embedded.deleteClientKey`, which documents it.
    func deleteClientKey(issuer: URL, clientID: String) throws -> Bool {
        guard let key = try existingClientKey(issuer: issuer, clientID: clientID) else { return false }
        do {
            for (entry, record) in try dpopKeys.dpopKeyRecords() where record.credential == key.handle.rawValue {
                try authenticator.vault.deleteKey(entry.handle)
            }
            try authenticator.vault.deleteKey(key.handle)
        } catch {
            throw LatchkeyError.wrapping(error)
        }
        return true
    }

    /// The work of `Embedded.clientCredentials`, which documents it.
    func clientCredentials(
        issuer: URL, clientID: String, scopes: [String]? = nil, audience: ClientAssertion.Audience = .issuer, dpop: Bool = false,
        minimumValidity: TimeInterval = 30, rejected: Tokens? = nil
    ) async throws -> Tokens {
        let flow = flow("clientCredentials")
        return try await flow.run {
            let address = try clientKeyAddress(issuer)
            guard let key = try existingClientKey(issuer: address.base, clientID: clientID) else {
                throw LatchkeyError.clientKeyMissing(reason: "no client key for \(clientID) at \(address.issuer): make one with clientKey(issuer:clientID:) and register its JWK Set")
            }
            let vault = authenticator.vault
            return try await vault.withExclusiveAccess("tokens") {
                let requested = scopes ?? []
                let record = configuration.cachesTokens || dpop ? try await dpopKeys.dpopKey(owner: key.handle.rawValue, protection: key.keyProtection) : nil
                let proof = try record.map(dpopKeys.dpopSigner)
                if let record, let kept = DPoPKeyRecord.decode(record.metadata) {
                    for cached in kept.tokens.reversed() where cached.fits(clientCredentialsOf: address.issuer, clientID: clientID, scopes: requested) {
                        guard let tokens = cached.tokens(issuerURL: address.base, dpop: proof, credentialID: nil), dpop == (tokens.dpop != nil) else { continue }
                        let refused = rejected.map { ConstantTime.isEqual(Data($0.accessToken.utf8), Data(tokens.accessToken.utf8)) } ?? false
                        if tokens.isValid(for: minimumValidity), !refused {
                            flow.logger.debug("client tokens from the cache", metadata: ["provider": .string(address.issuer)])
                            return tokens
                        }
                    }
                }
                let handle = key.handle
                let entry = try vault.entry(handle)
                let signer = try ClientAssertionSigner(publicKey: entry.publicKey) { try vault.sign($0, with: handle) }
                var oauth = OAuthClient.Configuration(
                    issuer: address.base, clientID: clientID, redirectURI: address.base,
                    authentication: .privateKeyJWT(signer, audience: audience), transport: transport
                )
                let allowedDomains = allowedDomains
                oauth.allowsForeignEndpoint = { allowedDomains.allows($0.host ?? "") }
                let tokenSet = try await OAuthClient(configuration: oauth).clientCredentials(scopes: scopes, dpop: dpop ? proof : nil)
                flow.emit(.tokensReceived)
                let tokens = Tokens(tokenSet: tokenSet, issuer: address.base, clientID: clientID, redirectURI: address.base, dpop: dpop ? proof : nil)
                if configuration.cachesTokens, let record {
                    do {
                        try vault.updateMetadata(record.handle) { data in
                            guard var current = DPoPKeyRecord.decode(data) else { throw LatchkeyError.vault(reason: "the DPoP key record is unreadable") }
                            data = try current.keep(CachedTokens(clientCredentials: tokens, issuer: address.issuer, scopes: requested))
                        }
                    } catch {
                        flow.logger.warning("client tokens not kept in the vault", metadata: [LogField.error.rawValue: .string(String(describing: error))])
                    }
                }
                return tokens
            }
        }
    }

    // MARK: Records

    private func clientKeyAddress(_ issuer: URL) throws -> ProviderAddress {
        try sessions.provider(issuer)
    }

    private func clientKeyRecords() throws -> [(entry: VaultEntry, record: ClientKeyRecord)] {
        try authenticator.vault.entries().compactMap { entry in
            ClientKeyRecord.decode(entry.metadata).map { (entry, $0) }
        }
    }

    private func clientKey(_ entry: VaultEntry, _ record: ClientKeyRecord) throws -> ClientKey {
        let signer = try ClientAssertionSigner(publicKey: entry.publicKey) { _ in Data() }
        guard let issuer = URL(string: record.issuer) else {
            throw LatchkeyError.vault(reason: "client key record \(entry.handle) names no issuer URL")
        }
        return ClientKey(
            issuer: issuer, clientID: record.clientID, keyID: signer.keyID, publicJWKSet: try signer.publicJWKSet,
            publicKeyPEM: entry.publicKey.pemRepresentation, keyProtection: entry.protection, handle: entry.handle
        )
    }
}
