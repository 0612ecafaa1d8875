#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import Glibc

/// Where device keys are kept and used without leaving: a ``KeyVault`` this process opened
/// with the vault key, or the same vault held open by a key agent (`latchkey agent`,
/// docs/PROTOCOL.md section 11) that this process asks over a socket.
///
/// Everything above the crypto core (the software authenticator, the facade's token cache,
/// client and DPoP keys) uses a vault through this protocol only, so a command that finds
/// an agent never needs the passphrase. No operation hands out a software private key or
/// the vault key; ``tpmKey(_:)`` gives a TPM-wrapped blob, which an agent refuses to send.
public protocol KeyStore: Sendable {
    /// The vault's directory: its lock files (``withExclusiveAccess(_:timeout:isolation:_:)``)
    /// are taken there by every process that uses it, agent or not.
    var directory: URL { get }

    /// Reads every record: the sound entries, oldest first, and one problem per record
    /// that cannot be read or authenticated, naming its handle.
    func scan() throws -> VaultScan

    /// The entry for `handle`; ``KeyVaultError/Code/keyNotFound`` when there is none.
    func entry(_ handle: KeyHandle) throws -> VaultEntry

    /// Signs `message` with the key `handle` (ES256: DER; Ed25519: 64 bytes).
    func sign(_ message: Data, with handle: KeyHandle) throws -> Data

    /// Generates a key, seals it and stores it with `metadata`.
    func createKey(_ algorithm: SigningAlgorithm, metadata: Data, protection: KeyProtection) throws -> VaultEntry

    /// Keeps a key a TPM made outside the vault (an attestation key) as a TPM key record.
    func storeKey(_ key: TPMSigningKey, metadata: Data) throws -> VaultEntry

    /// The TPM key of `handle`, for TPM commands the vault does not run itself.
    func tpmKey(_ handle: KeyHandle) throws -> TPMSigningKey

    /// Whether the key `handle` can sign on this host, without signing.
    func checkUsable(_ handle: KeyHandle) throws

    /// Reads, changes and writes `handle`'s metadata so that concurrent updates from any
    /// process never lose one another. `update` may run more than once (an agent's store
    /// retries when another writer came first): keep it a pure function of its input.
    @discardableResult
    func updateMetadata(_ handle: KeyHandle, _ update: (inout Data) throws -> Void) throws -> VaultEntry

    /// Changes `handle`'s metadata as ``updateMetadata(_:_:)`` does, then signs the
    /// message `update` made from the new metadata: a signature exists only over metadata
    /// that was stored first (a WebAuthn signature counter, WebAuthn §6.1.1). An agent's
    /// store does both in one request; `update` may run more than once, like
    /// ``updateMetadata(_:_:)``'s.
    func updateMetadataAndSign(_ handle: KeyHandle, _ update: (inout Data) throws -> Data) throws -> (entry: VaultEntry, signature: Data)

    /// Deletes the key `handle`; ``KeyVaultError/Code/keyNotFound`` if there is none.
    func deleteKey(_ handle: KeyHandle) throws
}

extension KeyStore {
    /// Every sound entry; records that fail are left out (``scan()`` reports them).
    public func entries() throws -> [VaultEntry] {
        try scan().entries
    }

    /// Signs any bytes.
    public func sign(_ message: some DataProtocol, with handle: KeyHandle) throws -> Data {
        try sign(Data(message), with: handle)
    }

    /// The metadata update, then the signature: two steps, for a store where neither
    /// crosses a socket.
    public func updateMetadataAndSign(_ handle: KeyHandle, _ update: (inout Data) throws -> Data) throws -> (entry: VaultEntry, signature: Data) {
        var message = Data()
        let entry = try updateMetadata(handle) { message = try update(&$0) }
        return (entry, try sign(message, with: handle))
    }

    /// Runs `body` holding the vault's lock called `name`, across processes and between
    /// tasks of this one: for work that must happen once however many callers want it at
    /// the same time, such as refreshing cached tokens (a refresh token is single-use).
    /// The lock is separate from the writers' lock, so `body` may create, update and delete
    /// records, and it may wait (network calls) without blocking a thread: a busy lock is
    /// retried every 10 ms, up to `timeout` (then ``KeyVaultError/Code/fileSystem``). A
    /// process that dies holding it releases it. `name` is lowercase letters and `-`.
    ///
    /// The lock is a file in the vault's directory, so a process that uses the vault
    /// through an agent takes the same lock as one that opened it itself.
    public func withExclusiveAccess<R>(
        _ name: String,
        timeout: Duration = .seconds(120),
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> R
    ) async throws -> R {
        guard !name.isEmpty, name.utf8.count <= 32, name.utf8.allSatisfy({ (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || $0 == UInt8(ascii: "-") }) else {
            throw KeyVaultError.fileSystem(reason: "a vault lock name is 1 to 32 lowercase letters or '-'")
        }
        let path = directory.path + "/.lock-" + name
        let deadline = ContinuousClock.now + timeout
        var descriptor = try VaultFiles.tryExclusiveLock(path)
        while descriptor == nil {
            guard ContinuousClock.now < deadline else {
                throw KeyVaultError.fileSystem(reason: "the vault's \(name) lock was held by another process or task for over \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(10))
            descriptor = try VaultFiles.tryExclusiveLock(path)
        }
        defer { if let descriptor { close(descriptor) } }
        return try await body()
    }
}
