#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import LatchkeyProtocol
import Logging
import Synchronization

extension KeyAgent {
    /// The most bytes one `sign` may cover: a WebAuthn assertion's authenticator data and
    /// client data hash, a DPoP proof's or client assertion's signing input are far less.
    static let maximumMessageSize = 64 * 1024
    /// Roughly how much of a frame one `scan` page may fill with entries.
    static let scanPageBudget = 160 * 1024
    /// The most damaged records one `scan` reports.
    static let maximumProblems = 256

    /// A request the agent refuses: its code and reason go back to the client.
    struct Refusal: Error {
        var failure: AgentFailure
        /// Whether the connection is closed after saying so (a malformed message: what
        /// follows it on the stream cannot be trusted).
        var closes = false

        init(_ code: String, _ reason: String, handle: String? = nil, closes: Bool = false) {
            failure = AgentFailure(code: code, reason: reason, handle: handle)
            self.closes = closes
        }
    }

    /// The answer to one frame body, and whether to close the connection after it.
    func answer(_ body: Data, peer: PeerCredentials) -> (AgentReply, closing: Bool) {
        do {
            // One decode per request; only a body that fails it is read again, for the
            // reason to give.
            let request: AgentRequest
            do {
                request = try JSONDecoder().decode(AgentRequest.self, from: body)
            } catch {
                let operation = try AgentFrame.operation(of: body)
                throw Refusal(AgentFailure.badRequest, "the \(operation) request is malformed: a field has the wrong type", closes: true)
            }
            try AgentFrame.validate(operation: request.op.rawValue)
            return (try perform(request, peer: peer), request.op == .stop)
        } catch let refusal as Refusal {
            return (AgentReply(error: refusal.failure), refusal.closes)
        } catch let error as AgentProtocolError {
            return (AgentReply(error: AgentFailure(code: AgentFailure.badRequest, reason: error.reason)), true)
        } catch let error as KeyVaultError {
            return (AgentReply(error: AgentFailure(code: error.code.description, reason: error.reason, handle: error.handle?.rawValue)), false)
        } catch {
            return (AgentReply(error: AgentFailure(code: AgentFailure.badRequest, reason: "the agent could not answer: \(error)")), false)
        }
    }

    private func perform(_ request: AgentRequest, peer: PeerCredentials) throws -> AgentReply {
        switch request.op {
        case .hello:
            return AgentReply(agent: status)
        case .lock:
            lock("asked by pid \(peer.pid)")
            return AgentReply(agent: status)
        case .unlock:
            try unlock(passphrase: request.passphrase)
            return AgentReply(agent: status)
        case .stop:
            configuration.logger.notice("agent stopping", metadata: ["pid": .stringConvertible(peer.pid)])
            lock("stopping")
            stop()
            return AgentReply()
        case .scan:
            return try scan(after: request.after)
        case .entry:
            return AgentReply(entry: Self.describe(try openVault().entry(handle(request))))
        case .sign:
            let handle = try handle(request)
            let message = try bytes(request.message, "message", maximum: Self.maximumMessageSize)
            let vault = try openVault()
            try confirm(signatureBy: handle, in: vault, peer: peer)
            return AgentReply(signature: Base64URL.encode(try vault.sign(message, with: handle)))
        case .replaceMetadataAndSign:
            let handle = try handle(request)
            let expected = try bytes(request.expected, "expected", maximum: KeyVault.maximumMetadataByteCount)
            let metadata = try bytes(request.metadata, "metadata", maximum: KeyVault.maximumMetadataByteCount)
            let message = try bytes(request.message, "message", maximum: Self.maximumMessageSize)
            let vault = try openVault()
            // Asked before the swap: a refused signature leaves the counter as it was.
            try confirm(signatureBy: handle, in: vault, peer: peer)
            let entry = try vault.replaceMetadata(handle, expected: expected, with: metadata)
            return AgentReply(entry: Self.describe(entry), signature: Base64URL.encode(try vault.sign(message, with: handle)))
        case .createKey:
            guard let algorithm = request.algorithm.flatMap(SigningAlgorithm.init(joseName:)) else {
                throw Refusal(AgentFailure.badRequest, "create-key needs an algorithm: ES256 or EdDSA")
            }
            guard let protection = request.protection.flatMap(KeyProtection.init(rawValue:)) else {
                throw Refusal(AgentFailure.badRequest, "create-key needs a protection: software or tpm")
            }
            let metadata = try bytes(request.metadata, "metadata", maximum: KeyVault.maximumMetadataByteCount)
            return AgentReply(entry: Self.describe(try openVault().createKey(algorithm, metadata: metadata, protection: protection)))
        case .replaceMetadata:
            let handle = try handle(request)
            let expected = try bytes(request.expected, "expected", maximum: KeyVault.maximumMetadataByteCount)
            let metadata = try bytes(request.metadata, "metadata", maximum: KeyVault.maximumMetadataByteCount)
            return AgentReply(entry: Self.describe(try openVault().replaceMetadata(handle, expected: expected, with: metadata)))
        case .deleteKey:
            try openVault().deleteKey(try handle(request))
            return AgentReply()
        case .checkUsable:
            try openVault().checkUsable(try handle(request))
            return AgentReply()
        default:
            throw Refusal(AgentFailure.unknownOperation, "this agent does not know the operation \(request.op.rawValue)")
        }
    }

    /// Asks the `--confirm` prompt, if there is one, whether `handle` may sign for `peer`;
    /// `denied` when it says no.
    /// Opens the vault with `passphrase`, or without one from the agent's own key source
    /// (a key file, a systemd credential, the TPM): `unlock` on either socket.
    func unlock(passphrase: String?) throws {
        let source: VaultKeySource
        if let passphrase {
            guard !passphrase.isEmpty, passphrase.utf8.count <= 4096 else {
                throw Refusal(AgentFailure.badRequest, "a passphrase is 1 to 4096 bytes")
            }
            source = .passphrase(passphrase)
        } else if let reopen = configuration.reopenSource {
            source = reopen
        } else {
            throw Refusal(AgentFailure.badRequest, "this vault unlocks with its passphrase: latchkey agent --unlock asks for it")
        }
        // One unlock at a time: each wrong passphrase costs its scrypt, in turn.
        try confirmations.withLock { _ in try unlock(with: source) }
    }

    func confirm(signatureBy handle: KeyHandle, in vault: KeyVault, peer: PeerCredentials) throws {
        guard let confirmation = configuration.confirmation else { return }
        let asked = signatureRequest(try vault.entry(handle), peer: peer)
        let allowed = confirmations.withLock { _ in confirmation(asked) }
        guard allowed else {
            configuration.logger.notice("agent signature denied", metadata: ["pid": .stringConvertible(peer.pid)])
            throw Refusal(AgentFailure.denied, "the signature was not confirmed at the agent's terminal", handle: handle.rawValue)
        }
    }

    /// The open vault, counted as a use for the idle timeout; `locked` when there is none.
    func openVault() throws -> KeyVault {
        let vault = state.withLock { state in
            if state.vault != nil { state.lastUse = .now }
            return state.vault
        }
        guard let vault else {
            throw Refusal(AgentFailure.locked, "the agent is locked: unlock it with latchkey agent --unlock")
        }
        return vault
    }

    private func handle(_ request: AgentRequest) throws -> KeyHandle {
        guard let text = request.handle, let handle = KeyHandle(rawValue: text) else {
            throw Refusal(AgentFailure.badRequest, "\(request.op.rawValue) needs a handle: 32 lower-case hexadecimal characters")
        }
        return handle
    }

    private func bytes(_ text: String?, _ field: String, maximum: Int) throws -> Data {
        guard let text, text.utf8.count <= (maximum * 4 + 2) / 3, let bytes = try? Base64URL.decode(text), bytes.count <= maximum else {
            throw Refusal(AgentFailure.badRequest, "\(field) must be base64url of at most \(maximum) bytes")
        }
        return bytes
    }

    /// A page of entries after `cursor`, in the vault's order (creation time, then handle).
    private func scan(after cursor: AgentCursor?) throws -> AgentReply {
        let scan = try openVault().scan()
        var entries: [AgentEntry] = []
        var used = 0
        var next: AgentCursor?
        for entry in scan.entries {
            let created = entry.createdAt.timeIntervalSince1970
            if let cursor, (created, entry.handle.rawValue) <= (cursor.createdAt, cursor.handle) { continue }
            let described = Self.describe(entry)
            let size = described.metadata.utf8.count + described.publicKey.utf8.count + 256
            if !entries.isEmpty, used + size > Self.scanPageBudget {
                next = entries.last.map { AgentCursor(createdAt: $0.createdAt, handle: $0.handle) }
                break
            }
            entries.append(described)
            used += size
        }
        let problems = cursor == nil
            ? scan.problems.prefix(Self.maximumProblems).map { AgentFailure(code: $0.code.description, reason: String($0.reason.prefix(512)), handle: $0.handle?.rawValue) }
            : nil
        return AgentReply(entries: entries, problems: problems, next: next)
    }

    static func describe(_ entry: VaultEntry) -> AgentEntry {
        AgentEntry(
            handle: entry.handle.rawValue, algorithm: entry.algorithm.joseName, publicKey: Base64URL.encode(entry.publicKeyDER),
            metadata: Base64URL.encode(entry.metadata), createdAt: entry.createdAt.timeIntervalSince1970,
            updatedAt: entry.updatedAt.timeIntervalSince1970, protection: entry.protection.rawValue
        )
    }

    /// What the `--confirm` prompt shows about a signature by `entry`'s key.
    private func signatureRequest(_ entry: VaultEntry, peer: PeerCredentials) -> AgentSignatureRequest {
        struct Described: Decodable {
            var kind: String?
            var rpID: String?
            var userName: String?
        }
        let described = try? JSONDecoder().decode(Described.self, from: entry.metadata)
        let command = (try? String(contentsOfFile: "/proc/\(peer.pid)/comm", encoding: .utf8))?.trimmingWhitespace()
        return AgentSignatureRequest(
            handle: entry.handle.rawValue, kind: described?.kind ?? "key", relyingParty: described?.rpID, userName: described?.userName,
            pid: peer.pid, command: command
        )
    }
}
