#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyWebAuthn
import Synchronization

struct DPoPKeyService: EmbeddedService {
    let core: EmbeddedCore
}

extension DPoPKeyService {
    /// The work of `Embedded.authorize`, which documents it.
    func authorize(request: TransportRequest, with tokens: Tokens) throws -> TransportRequest {
        var request = request
        do {
            if let dpop = tokens.dpop {
                request.headers.merge(try dpop.headers(method: request.method, url: request.url, accessToken: tokens.accessToken)) { $1 }
            } else {
                request.headers["Authorization"] = AccessTokenType.bearer.authorization(tokens.accessToken)
            }
        } catch {
            throw LatchkeyError.wrapping(error)
        }
        return request
    }

    /// The work of `Embedded.transport`, which documents it.
    func transport(for tokens: Tokens) -> any HTTPTransport {
        AccessTokenTransport(inner: transport, accessToken: tokens.accessToken, dpop: tokens.dpop, allowedOrigins: resourceOrigins(for: tokens))
    }

    /// The work of `Embedded.resourceOrigins`, which documents it.
    func resourceOrigins(for tokens: Tokens) -> Set<WebOrigin> {
        Set(configuration.allowedResourceOrigins + [WebOrigin(tokens.issuer)].compactMap { $0 })
    }

    // MARK: The DPoP key of a credential

    /// Every DPoP key record in the vault with its metadata.
    func dpopKeyRecords() throws -> [(entry: VaultEntry, record: DPoPKeyRecord)] {
        dpopKeyRecords(in: try authenticator.vault.entries())
    }

    /// The DPoP key records among `entries`, one listing of the vault.
    func dpopKeyRecords(in entries: [VaultEntry]) -> [(entry: VaultEntry, record: DPoPKeyRecord)] {
        entries.compactMap { entry in
            DPoPKeyRecord.decode(entry.metadata).map { (entry, $0) }
        }
    }

    /// The DPoP key record of `credential`, made now (under the vault's `dpop-keys`
    /// lock, so two processes never make two) when it has none: ES256 (RFC 9449 §4.2's
    /// example algorithm, and the only one a TPM has), protected as the credential's key
    /// is. When several exist (a vault from elsewhere), the oldest is used.
    func dpopKey(for credential: Credential) async throws -> VaultEntry {
        let entry = try await dpopKey(owner: credential.handle.rawValue, protection: credential.keyProtection)
        core.dpopKeyHandles.withLock { $0[credential.handle] = entry.handle }
        return entry
    }

    /// ``dpopKey(for:)``, found in `entries` (a listing the caller made) when it is there.
    func dpopKey(for credential: Credential, among entries: [VaultEntry]) async throws -> VaultEntry {
        // The record this instance last used, if it is still listed: no record decoded.
        if let known = core.dpopKeyHandles.withLock({ $0[credential.handle] }), let listed = entries.first(where: { $0.handle == known }) {
            return listed
        }
        guard let listed = dpopKeyRecords(in: entries).first(where: { $0.record.credential == credential.handle.rawValue })?.entry else {
            return try await dpopKey(for: credential)
        }
        core.dpopKeyHandles.withLock { $0[credential.handle] = listed.handle }
        return listed
    }

    /// The DPoP key record of the vault record `owner` (a credential or a client key),
    /// made now under the `dpop-keys` lock when it has none, protected as `protection` says.
    func dpopKey(owner: String, protection: KeyProtection) async throws -> VaultEntry {
        let vault = authenticator.vault
        if let existing = try dpopKeyRecords().first(where: { $0.record.credential == owner }) {
            return existing.entry
        }
        return try await vault.withExclusiveAccess("dpop-keys") {
            if let existing = try dpopKeyRecords().first(where: { $0.record.credential == owner }) {
                return existing.entry
            }
            return try vault.createKey(.es256, metadata: DPoPKeyRecord(owner: owner).encoded(), protection: protection)
        }
    }

    /// The signer of a DPoP key record: the vault signs (in the TPM for a TPM key), the
    /// private key never leaves it.
    func dpopSigner(_ entry: VaultEntry) throws -> DPoPSigner {
        if let signer = core.dpopSigners.withLock({ $0[entry.handle] }) { return signer }
        let vault = authenticator.vault
        let handle = entry.handle
        let signer = try DPoPSigner(publicKey: entry.publicKey) { try vault.sign($0, with: handle) }
        core.dpopSigners.withLock { $0[entry.handle] = signer }
        return signer
    }

    /// Deletes the DPoP key records of a deleted credential (and with them its cached
    /// tokens). Best effort: a record left behind belongs to no credential and signs nothing.
    func deleteDPoPKeys(of credential: Credential) {
        _ = core.dpopKeyHandles.withLock { $0.removeValue(forKey: credential.handle) }
        guard let records = try? dpopKeyRecords() else { return }
        for (entry, record) in records where record.credential == credential.handle.rawValue {
            try? authenticator.vault.deleteKey(entry.handle)
            _ = core.dpopSigners.withLock { $0.removeValue(forKey: entry.handle) }
        }
    }
}
