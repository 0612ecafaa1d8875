#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import LatchkeyCrypto
public import LatchkeyProtocol
import Synchronization

/// A connection to a key agent (``KeyAgent``, `latchkey agent`): how a process uses a vault
/// an agent holds, and how `latchkey agent --lock`, `--unlock` and `--stop` reach it.
///
/// One request at a time per connection; the agent answers each connection on a thread of
/// its own. Only an agent running as this process's user (or root) is spoken to: a socket
/// someone else planted at the path is refused before anything is sent. (Root itself
/// speaks to any user's agent; that agent decides, by `--allow-root`.)
public final class KeyAgentConnection: Sendable {
    /// The socket's path.
    public let socketPath: String
    private let socket: UnixSocket
    /// One request at a time on the stream, and what it leaves behind.
    private let stream = Mutex<StreamState>(StreamState())

    private struct StreamState {
        var reader = AgentFrameReader()
        /// Set once the connection failed: the stream's state is unknown after that.
        var broken: String?
    }

    /// How long one answer may take: a signature may wait for a person at the agent's
    /// `--confirm` prompt, and a TPM key for the TPM.
    static let answerTimeout: Duration = .seconds(120)

    private init(socketPath: String, socket: UnixSocket) {
        self.socketPath = socketPath
        self.socket = socket
    }

    /// Connects to the agent at `socketPath`. Throws ``LatchkeyError/Code/agent`` when
    /// nothing answers there or another user's process does.
    public static func connect(to socketPath: String) throws -> KeyAgentConnection {
        do {
            return try open(socketPath)
        } catch {
            throw LatchkeyError.wrapping(error)
        }
    }

    static func open(_ socketPath: String) throws -> KeyAgentConnection {
        let socket: UnixSocket
        let peer: PeerCredentials
        do {
            socket = try UnixSocket.connect(path: socketPath)
            peer = try socket.peer()
        } catch let error as UnixSocketError {
            throw KeyVaultError.agentUnavailable(reason: "no agent answers at \(socketPath) (\(error.reason))", underlying: error)
        }
        // Root may use any user's agent that answers it (`--allow-root`): root could read
        // that user's files anyway.
        guard peer.uid == getuid() || peer.uid == 0 || getuid() == 0 else {
            throw KeyVaultError.agentUnavailable(reason: "the socket \(socketPath) is served by uid \(peer.uid), not by you; not using it")
        }
        return KeyAgentConnection(socketPath: socketPath, socket: socket)
    }

    /// The agent's state: the vault it holds, whether it is locked.
    public func status() throws -> AgentStatus {
        try control(AgentRequest(op: .hello))
    }

    /// Makes the agent forget the vault key until ``unlock(passphrase:)``.
    @discardableResult
    public func lock() throws -> AgentStatus {
        try control(AgentRequest(op: .lock))
    }

    /// Opens the vault again in the agent: a passphrase vault needs `passphrase`
    /// (``AgentStatus/passphraseToUnlock``); other vaults are opened from the agent's own
    /// key source. A wrong passphrase is ``LatchkeyError/Code/vault``.
    @discardableResult
    public func unlock(passphrase: String?) throws -> AgentStatus {
        try control(AgentRequest(op: .unlock, passphrase: passphrase))
    }

    /// Ends the agent; it removes its socket.
    public func stop() throws {
        do {
            _ = try exchange(AgentRequest(op: .stop))
        } catch {
            throw LatchkeyError.wrapping(error)
        }
    }

    private func control(_ request: AgentRequest) throws -> AgentStatus {
        do {
            guard let status = try exchange(request).agent else {
                throw KeyVaultError.agentUnavailable(reason: "the agent at \(socketPath) answered \(request.op) without its state")
            }
            return status
        } catch {
            throw LatchkeyError.wrapping(error)
        }
    }

    /// Sends `request` and returns the agent's answer; an answer with an error is thrown as
    /// the ``KeyVaultError`` it names (the vault's codes as they are, the agent's own as
    /// ``KeyVaultError/Code/agentUnavailable``).
    func exchange(_ request: AgentRequest) throws -> AgentReply {
        let reply: AgentReply = try stream.withLock { state in
            if let broken = state.broken { throw KeyVaultError.agentUnavailable(reason: broken) }
            do {
                let deadline = ContinuousClock.now + Self.answerTimeout
                try socket.write(AgentFrame.encode(request), deadline: deadline)
                guard let body = try socket.readFrame(&state.reader, deadline: deadline) else {
                    throw UnixSocketError("the agent closed the connection", errno: 0, code: .peer)
                }
                do {
                    return try JSONDecoder().decode(AgentReply.self, from: body)
                } catch {
                    throw UnixSocketError("the agent's answer is malformed", errno: 0, code: .peer)
                }
            } catch {
                let why = (error as? UnixSocketError)?.reason ?? (error as? AgentProtocolError)?.reason ?? String(describing: error)
                let broken = "the agent at \(socketPath) stopped answering (\(why)) during \(request.op); run the command again, or without LATCHKEY_AGENT_SOCK to open the vault directly"
                state.broken = broken
                throw KeyVaultError.agentUnavailable(reason: broken)
            }
        }
        if let failure = reply.error {
            let handle = failure.handle.flatMap(KeyHandle.init(rawValue:))
            let reason = String(failure.reason.prefix(1024))
            switch failure.code {
            case AgentFailure.locked, AgentFailure.denied, AgentFailure.badRequest, AgentFailure.unknownOperation:
                throw KeyVaultError.agentUnavailable(reason: "the agent: " + reason, handle: handle)
            default:
                throw KeyVaultError(code: .named(String(failure.code.prefix(64))), reason: reason, handle: handle)
            }
        }
        return reply
    }
}
