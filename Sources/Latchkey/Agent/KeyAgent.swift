#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import Glibc
public import LatchkeyCrypto
import LatchkeyProtocol
public import Logging
import Synchronization

/// Unlock once (docs/SECURITY.md, "The key agent"): holds one vault open and uses its keys
/// for the user's other processes, which ask over a Unix socket (docs/PROTOCOL.md section
/// 11) instead of deriving the vault key again (scrypt, ~0.4 s by design).
///
/// What crosses the socket is what a command needs done (list the entries, sign these
/// bytes with key X, make a key, swap a record's metadata, delete a key), never a private
/// key or the vault key. Each connection's peer is checked with `SO_PEERCRED`: only this
/// process's user is answered (root too with ``Configuration/allowsRoot``); anyone else is
/// closed on without a word, and logged.
///
/// The agent forgets the vault key (locks) after ``Configuration/idleTimeout`` without a
/// request, after ``Configuration/lifetime`` since it was unlocked, and on `lock`; a
/// locked agent answers `locked` until `unlock`.
public final class KeyAgent: Sendable {
    /// How an agent is set up.
    public struct Configuration: Sendable {
        /// The vault it holds.
        public var vaultDirectory: URL
        /// How it opens the vault at start and on `unlock` without a passphrase: a TPM
        /// sealed vault key, a key file or a systemd credential can be read again. Nil for
        /// a passphrase vault: `unlock` then needs the passphrase from the client.
        public var reopenSource: VaultKeySource?
        /// Locks after this long without a request that used the vault (15 minutes by
        /// default; nil: never).
        public var idleTimeout: Duration? = .seconds(15 * 60)
        /// Locks this long after each unlock (nil: never).
        public var lifetime: Duration?
        /// Answers root's processes too. Off: root can read this user's memory anyway,
        /// but a socket answered for root is one more way in for a confused root daemon.
        public var allowsRoot = false
        /// Asked before each signature (`latchkey agent --confirm`, like `ssh-add -c`):
        /// true lets it happen. Runs on the connection's thread; it may block (a terminal
        /// prompt), and prompts are asked one at a time.
        public var confirmation: (@Sendable (AgentSignatureRequest) -> Bool)?
        /// Where refusals, locks and failures are logged. Never a key, passphrase,
        /// signature or metadata.
        public var logger: Logger
        /// The most connections served at once; more are closed at once.
        public var maximumConnections = 128

        public init(vaultDirectory: URL, reopenSource: VaultKeySource?, logger: Logger) {
            self.vaultDirectory = vaultDirectory
            self.reopenSource = reopenSource
            self.logger = logger
        }
    }

    struct State {
        var vault: KeyVault?
        var unlockedAt: ContinuousClock.Instant?
        var lastUse = ContinuousClock.now
        var connections = 0
        var stopping = false
    }

    public let configuration: Configuration
    /// The vault directory as an absolute path without symbolic links: what `hello`
    /// answers and clients compare with their own.
    public let store: String
    let state = Mutex(State())
    /// One confirmation prompt (or unlock) at a time.
    let confirmations = Mutex(())
    /// The socket ``listen(at:environment:)`` bound.
    let listening = Mutex<UnixSocketListener?>(nil)
    /// The ssh-agent socket ``listenSSH(at:environment:)`` bound, if any.
    let sshListening = Mutex<UnixSocketListener?>(nil)

    /// An agent over the vault at ``Configuration/vaultDirectory``, opened with `source`
    /// (nil: start locked, for `unlock` to open).
    public init(configuration: Configuration, openingWith source: VaultKeySource?) throws {
        self.configuration = configuration
        store = Self.canonicalPath(configuration.vaultDirectory)
        if let source {
            let vault = try KeyVault.open(at: configuration.vaultDirectory, key: source)
            state.withLock {
                $0.vault = vault
                $0.unlockedAt = .now
            }
        }
    }

    /// `directory` as an absolute path with symbolic links resolved (as far as it exists).
    static func canonicalPath(_ directory: URL) -> String {
        directory.standardizedFileURL.resolvingSymlinksInPath().path
    }

    /// The state a `hello`, `lock` or `unlock` answers with.
    var status: AgentStatus {
        state.withLock { state in
            AgentStatus(
                version: Int(AgentFrame.version), store: store, locked: state.vault == nil, confirms: configuration.confirmation != nil,
                pid: getpid(), passphraseToUnlock: configuration.reopenSource == nil
            )
        }
    }

    /// Forgets the vault: the keys derived from the vault key and every unsealed private
    /// key go with the last reference (a request being answered finishes first), wiped.
    public func lock(_ why: String) {
        let wasOpen = state.withLock { state in
            defer {
                state.vault = nil
                state.unlockedAt = nil
            }
            return state.vault != nil
        }
        if wasOpen { configuration.logger.notice("agent locked", metadata: ["why": .string(why)]) }
    }

    /// Opens the vault with `source` unless it is open.
    func unlock(with source: VaultKeySource) throws {
        if state.withLock({ $0.vault != nil }) { return }
        let vault = try KeyVault.open(at: configuration.vaultDirectory, key: source)
        state.withLock { state in
            state.vault = vault
            state.unlockedAt = .now
            state.lastUse = .now
        }
        configuration.logger.notice("agent unlocked")
    }

    /// Ends ``serve(on:)`` within half a second.
    public func stop() {
        state.withLock { $0.stopping = true }
    }

    /// Locks when the idle time or lifetime has run out.
    func enforceTimeouts() {
        let now = ContinuousClock.now
        let expired: String? = state.withLock { state in
            guard state.vault != nil else { return nil }
            if let idle = configuration.idleTimeout, now - state.lastUse >= idle { return "idle for \(idle)" }
            if let lifetime = configuration.lifetime, let since = state.unlockedAt, now - since >= lifetime { return "lifetime of \(lifetime) reached" }
            return nil
        }
        if let expired { lock(expired) }
    }

    /// Serves connections on `listener` until ``stop()``, each on a thread of its own, and
    /// removes the socket file then. Blocks the calling thread: run it on one of its own.
    func serve(on listener: UnixSocketListener, ssh: Bool = false) {
        defer { listener.remove() }
        while !state.withLock({ $0.stopping }) {
            enforceTimeouts()
            let connection: UnixSocket?
            do {
                connection = try listener.accept(timeout: 500)
            } catch {
                configuration.logger.error("agent cannot accept connections", metadata: [LogField.error.rawValue: .string(String(describing: error))])
                usleep(100_000)
                continue
            }
            guard let connection else { continue }
            admit(connection, ssh: ssh)
        }
    }

    /// Starts answering `connection` if its peer may ask and a slot is free.
    private func admit(_ connection: UnixSocket, ssh: Bool) {
        let peer: PeerCredentials
        do {
            peer = try connection.peer()
        } catch {
            configuration.logger.warning("agent closed a connection whose peer it cannot tell", metadata: [LogField.error.rawValue: .string(String(describing: error))])
            return
        }
        let own = getuid()
        guard peer.uid == own || (peer.uid == 0 && configuration.allowsRoot) else {
            configuration.logger.warning(
                "agent refused a connection from another user",
                metadata: ["uid": .stringConvertible(peer.uid), "pid": .stringConvertible(peer.pid)]
            )
            return
        }
        let admitted = state.withLock { state in
            guard state.connections < configuration.maximumConnections else { return false }
            state.connections += 1
            return true
        }
        guard admitted else {
            configuration.logger.warning("agent closed a connection: \(configuration.maximumConnections) are open already")
            return
        }
        let started = DetachedThread.start(stackSize: 1 << 20) { [self] in
            defer { state.withLock { $0.connections -= 1 } }
            if ssh {
                converseSSH(with: connection, peer: peer)
            } else {
                converse(with: connection, peer: peer)
            }
        }
        if !started {
            state.withLock { $0.connections -= 1 }
            configuration.logger.warning("agent closed a connection: no thread to serve it on")
        }
    }

    /// Answers requests on one connection until the peer closes it, sends something
    /// malformed, or asks the agent to stop.
    private func converse(with connection: UnixSocket, peer: PeerCredentials) {
        var reader = AgentFrameReader()
        while true {
            let body: Data
            do {
                guard let frame = try connection.readFrame(&reader, deadline: nil) else { return }
                body = frame
            } catch let error as AgentProtocolError {
                // A bad header or a frame cut short: say why once, then close.
                configuration.logger.info("agent closed a connection", metadata: [LogField.cause.rawValue: .string(error.reason), "pid": .stringConvertible(peer.pid)])
                _ = try? connection.write(AgentFrame.encode(AgentReply(error: AgentFailure(code: AgentFailure.badRequest, reason: error.reason))), deadline: .now + .seconds(5))
                return
            } catch {
                return
            }
            let (reply, closing) = answer(body, peer: peer)
            do {
                try connection.write(AgentFrame.encode(reply), deadline: .now + .seconds(30))
            } catch {
                return
            }
            if closing { return }
        }
    }
}
