public import Foundation
import LatchkeyCrypto
public import LatchkeyOAuth
import LatchkeyWebAuthn

extension Embedded {
    /// The client key for `clientID` at `issuer`, made now when there is none (ES256,
    /// protected as ``Configuration/keyProtection`` says; under the vault's `client-keys`
    /// lock, so two processes never make two). The same key is returned every time after.
    public func clientKey(issuer: URL, clientID: String) async throws -> ClientKey {
        do {
            let address = try clientKeyAddress(issuer)
            if let existing = try existingClientKey(issuer: address.base, clientID: clientID) { return existing }
            let vault = authenticator.vault
            let protection = keyProtectionForNewCredentials().protection
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

    /// The client key for `clientID` at `issuer`, or nil; nothing is made.
    public func existingClientKey(issuer: URL, clientID: String) throws -> ClientKey? {
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

    /// Deletes the client key; false when there was none. The provider keeps the public
    /// key registered until its operator removes it: it can verify nothing new.
    @discardableResult
    public func deleteClientKey(issuer: URL, clientID: String) throws -> Bool {
        guard let key = try existingClientKey(issuer: issuer, clientID: clientID) else { return false }
        do {
            try authenticator.vault.deleteKey(key.handle)
        } catch {
            throw LatchkeyError.wrapping(error)
        }
        return true
    }

    /// Tokens for the client itself (RFC 6749 §4.4), authenticated by its client key
    /// (``clientKey(issuer:clientID:)``, which must exist and be registered at the
    /// provider): no person, so no ID token and no refresh token. `audience` is the
    /// assertions' `aud` (the issuer identifier unless the provider demands its token
    /// endpoint); with `dpop` the token is bound to a DPoP key of its own, not the client key.
    public func clientCredentials(
        issuer: URL, clientID: String, scopes: [String]? = nil, audience: ClientAssertion.Audience = .issuer, dpop: Bool = false
    ) async throws -> Tokens {
        do {
            let address = try clientKeyAddress(issuer)
            guard let key = try existingClientKey(issuer: address.base, clientID: clientID) else {
                throw LatchkeyError.clientKeyMissing(reason: "no client key for \(clientID) at \(address.issuer): make one with clientKey(issuer:clientID:) and register its JWK Set")
            }
            let vault = authenticator.vault
            let handle = key.handle
            let entry = try vault.entry(handle)
            let signer = try ClientAssertionSigner(publicKey: entry.publicKey) { try vault.sign($0, with: handle) }
            var oauth = OAuthClient.Configuration(
                issuer: address.base, clientID: clientID, redirectURI: address.base,
                authentication: .privateKeyJWT(signer, audience: audience), transport: transport
            )
            let allowedDomains = allowedDomains
            oauth.allowsForeignEndpoint = { allowedDomains.allows($0.host ?? "") }
            let proof = dpop ? try DPoPSigner(key: SigningKey.generate(.es256)) : nil
            let tokens = try await OAuthClient(configuration: oauth).clientCredentials(scopes: scopes, dpop: proof)
            return Tokens(tokenSet: tokens, issuer: address.base, clientID: clientID, redirectURI: address.base, dpop: proof)
        } catch {
            throw LatchkeyError.wrapping(error)
        }
    }

    // MARK: Records

    private func clientKeyAddress(_ issuer: URL) throws -> ProviderAddress {
        let address = try ProviderAddress(issuer)
        try allowedDomains.check(address)
        return address
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
            keyProtection: entry.protection, handle: entry.handle
        )
    }
}
