#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import LatchkeyCrypto
import LatchkeyProtocol
import Synchronization

/// A vault a key agent holds, used through its socket (``KeyAgentConnection``): what the
/// facade's authenticator and token cache run on when ``Embedded/Configuration/agentSocket``
/// names a live agent for the same vault. Lock files are taken in the vault's directory
/// here, as a process that opened the vault itself takes them.
///
/// Everything the agent answers is checked as hostile input: handles, algorithms,
/// encodings and public keys are validated before they become a `VaultEntry`.
final class AgentKeyStore: KeyStore, Sendable {
    let directory: URL
    let connection: KeyAgentConnection
    /// What the agent said of itself when this store connected.
    let agent: AgentStatus
    /// The metadata each record had when the agent last described it: a metadata update
    /// offers it as the expected value straight away, saving a round trip when nothing
    /// changed since (the swap still checks; a stale guess costs one retry).
    private let seenMetadata = Mutex<[KeyHandle: Data]>([:])

    /// How often a metadata update is tried again when another writer came first; each
    /// retry waits a random while, longer each time, so writers that collided spread out.
    static let updateAttempts = 64

    /// The agent at `socketPath`, if it serves `directory` and is unlocked; otherwise an
    /// ``KeyVaultError/Code/agentUnavailable`` saying which.
    init(socketPath: String, directory: URL) throws {
        connection = try KeyAgentConnection.open(socketPath)
        guard let status = try connection.exchange(AgentRequest(op: .hello)).agent else {
            throw KeyVaultError.agentUnavailable(reason: "the agent at \(socketPath) did not say which vault it holds")
        }
        let wanted = KeyAgent.canonicalPath(directory)
        guard status.store == wanted else {
            throw KeyVaultError.agentUnavailable(reason: "the agent at \(socketPath) holds another vault (\(status.store.prefix(512)))")
        }
        guard !status.locked else {
            throw KeyVaultError.agentUnavailable(reason: "the agent at \(socketPath) is locked; unlock it with latchkey agent --unlock")
        }
        self.directory = URL(fileURLWithPath: wanted)
        agent = status
    }

    /// `entry`, remembered for ``updateMetadata(_:_:)``.
    private func remember(_ entry: VaultEntry) -> VaultEntry {
        seenMetadata.withLock { seen in
            if seen.count > 4096 { seen.removeAll() }
            seen[entry.handle] = entry.metadata
        }
        return entry
    }

    func scan() throws -> VaultScan {
        var scan = VaultScan(entries: [], problems: [])
        var cursor: AgentCursor?
        // Each page ends strictly after the one before, so this ends; the bound is for an
        // agent that answers otherwise.
        for _ in 0..<100_000 {
            let reply = try connection.exchange(AgentRequest(op: .scan, after: cursor))
            scan.entries += try (reply.entries ?? []).map { remember(try Self.entry($0)) }
            scan.problems += (reply.problems ?? []).map {
                KeyVaultError(code: .named(String($0.code.prefix(64))), reason: String($0.reason.prefix(1024)), handle: $0.handle.flatMap(KeyHandle.init(rawValue:)))
            }
            guard let next = reply.next else { return scan }
            if let cursor, (next.createdAt, next.handle) <= (cursor.createdAt, cursor.handle) {
                throw KeyVaultError.agentUnavailable(reason: "the agent's scan went backwards")
            }
            cursor = next
        }
        throw KeyVaultError.agentUnavailable(reason: "the agent's scan did not end")
    }

    func entry(_ handle: KeyHandle) throws -> VaultEntry {
        remember(try Self.entry(answered(try connection.exchange(AgentRequest(op: .entry, handle: handle.rawValue)).entry)))
    }

    func sign(_ message: Data, with handle: KeyHandle) throws -> Data {
        try Self.signature(in: connection.exchange(AgentRequest(op: .sign, handle: handle.rawValue, message: Base64URL.encode(message))), by: handle)
    }

    /// The signature an answer carries, checked: base64url of 1 to 768 bytes.
    private static func signature(in reply: AgentReply, by handle: KeyHandle) throws -> Data {
        guard let text = reply.signature, text.utf8.count <= 1024, let signature = try? Base64URL.decode(text), !signature.isEmpty else {
            throw KeyVaultError.agentUnavailable(reason: "the agent answered a signature that is not base64url of at most 768 bytes", handle: handle)
        }
        return signature
    }

    func createKey(_ algorithm: SigningAlgorithm, metadata: Data, protection: KeyProtection) throws -> VaultEntry {
        let reply = try connection.exchange(AgentRequest(
            op: .createKey, algorithm: algorithm.joseName, protection: protection.rawValue, metadata: Base64URL.encode(metadata)
        ))
        return remember(try Self.entry(answered(reply.entry)))
    }

    /// An attestation key is made and kept by the process that attests (TPM commands the
    /// agent does not run): the command opens the vault itself for `--attest`.
    func storeKey(_ key: TPMSigningKey, metadata: Data) throws -> VaultEntry {
        throw KeyVaultError.agentUnavailable(reason: "keeping an attestation key needs the vault opened by this process, not through an agent")
    }

    /// An agent never sends key material, a TPM-wrapped blob included.
    func tpmKey(_ handle: KeyHandle) throws -> TPMSigningKey {
        throw KeyVaultError.agentUnavailable(reason: "an agent does not hand out keys; TPM attestation needs the vault opened by this process", handle: handle)
    }

    func checkUsable(_ handle: KeyHandle) throws {
        _ = try connection.exchange(AgentRequest(op: .checkUsable, handle: handle.rawValue))
    }

    func updateMetadata(_ handle: KeyHandle, _ update: (inout Data) throws -> Void) throws -> VaultEntry {
        try swapMetadata(handle) { expected in
            var metadata = expected
            try update(&metadata)
            return (metadata, nil)
        }.entry
    }

    /// The swap and the signature in one request (`replace-metadata-and-sign`): the agent
    /// signs only when the swap took place.
    func updateMetadataAndSign(_ handle: KeyHandle, _ update: (inout Data) throws -> Data) throws -> (entry: VaultEntry, signature: Data) {
        let (entry, signature) = try swapMetadata(handle) { expected in
            var metadata = expected
            let message = try update(&metadata)
            return (metadata, message)
        }
        guard let signature else { throw KeyVaultError.agentUnavailable(reason: "the agent's answer lacks the signature", handle: handle) }
        return (entry, signature)
    }

    /// Reads the metadata, lets `change` make the new metadata (and the message to sign
    /// once it is stored, if any), and asks the agent to swap it in if it is still what was
    /// read; when another writer came first, reads again and retries.
    private func swapMetadata(
        _ handle: KeyHandle, _ change: (_ expected: Data) throws -> (metadata: Data, message: Data?)
    ) throws -> (entry: VaultEntry, signature: Data?) {
        for round in 0..<Self.updateAttempts {
            if round > 1 { usleep(UInt32.random(in: 0...UInt32(min(round, 20) * 500))) }
            let seen = round == 0 ? seenMetadata.withLock({ $0[handle] }) : nil
            let expected = try seen ?? entry(handle).metadata
            let (metadata, message) = try change(expected)
            try KeyVault.checkMetadataSize(metadata, handle: handle)
            let request = AgentRequest(
                op: message == nil ? .replaceMetadata : .replaceMetadataAndSign, handle: handle.rawValue, message: message.map(Base64URL.encode),
                metadata: Base64URL.encode(metadata), expected: Base64URL.encode(expected)
            )
            do {
                let reply = try connection.exchange(request)
                let entry = remember(try Self.entry(answered(reply.entry)))
                return (entry, try message.map { _ in try Self.signature(in: reply, by: handle) })
            } catch let error as KeyVaultError where error.code == .metadataChanged {
                continue
            }
        }
        throw KeyVaultError.metadataChanged(reason: "key \(handle)'s metadata kept changing under \(Self.updateAttempts) attempts", handle: handle)
    }

    func deleteKey(_ handle: KeyHandle) throws {
        _ = seenMetadata.withLock { $0.removeValue(forKey: handle) }
        _ = try connection.exchange(AgentRequest(op: .deleteKey, handle: handle.rawValue))
    }

    private func answered(_ entry: AgentEntry?) throws -> AgentEntry {
        guard let entry else { throw KeyVaultError.agentUnavailable(reason: "the agent's answer lacks the entry") }
        return entry
    }

    /// An entry the agent described, validated field by field.
    static func entry(_ described: AgentEntry) throws -> VaultEntry {
        guard let handle = KeyHandle(rawValue: described.handle),
              let algorithm = SigningAlgorithm(joseName: described.algorithm),
              let protection = KeyProtection(rawValue: described.protection),
              described.publicKey.utf8.count <= 256, let publicKey = try? Base64URL.decode(described.publicKey),
              described.metadata.utf8.count <= (KeyVault.maximumMetadataByteCount * 4 + 2) / 3, let metadata = try? Base64URL.decode(described.metadata),
              described.createdAt.isFinite, described.updatedAt.isFinite
        else {
            throw KeyVaultError.agentUnavailable(reason: "the agent described a vault entry that is malformed")
        }
        do {
            return try VaultEntry(
                handle: handle, algorithm: algorithm, publicKeyDER: publicKey, metadata: metadata,
                createdAt: Date(timeIntervalSince1970: described.createdAt), updatedAt: Date(timeIntervalSince1970: described.updatedAt), protection: protection
            )
        } catch {
            throw KeyVaultError.agentUnavailable(reason: "the agent described a public key that is not P-256 or Ed25519", handle: handle, underlying: error)
        }
    }
}
