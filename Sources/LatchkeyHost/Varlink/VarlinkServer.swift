#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import Glibc
import Latchkey
import Logging
import Synchronization

/// A varlink service on a Unix socket: each connection answered on a thread of its own,
/// calls one after another, every reply written before the next call is read.
///
/// Every process on the host connects to the user database socket (nss-systemd asks it
/// for each lookup), so the server trusts no peer: at most ``maximumConnections`` at once
/// and ``maximumConnectionsPerUser`` of any one user but root (one more is closed at once,
/// never queued, so one user holding connections open cannot starve the others' lookups,
/// nor `sshd`'s), ``idleTimeout`` for a peer to send its
/// next call and for a reply to be taken, ``maximumCallsPerConnection`` calls, a message
/// at most 64 KiB (``VarlinkFrameReader``). A malformed call ends its connection; the
/// daemon goes on.
final class VarlinkServer: Sendable {
    typealias Handler = @Sendable (VarlinkCall, PeerCredentials, (VarlinkReply) throws -> Void) throws -> Void

    static let maximumConnections = 256
    static let maximumConnectionsPerUser = 32
    static let idleTimeout: Duration = .seconds(5)
    static let maximumCallsPerConnection = 4096

    private let listener: UnixSocketListener
    private let admits: @Sendable (PeerCredentials) -> Bool
    private let handler: Handler
    private let logger: Logger
    private struct State {
        var stopping = false
        var connections = 0
        var byUser: [UInt32: Int] = [:]
    }

    private let state = Mutex(State())

    /// Serves `listener`; `admits` decides from the peer's credentials whether it may ask
    /// anything (a refused peer's connection is closed with no reply).
    init(listener: UnixSocketListener, logger: Logger, admits: @escaping @Sendable (PeerCredentials) -> Bool = { _ in true }, handler: @escaping Handler) {
        self.listener = listener
        self.logger = logger
        self.admits = admits
        self.handler = handler
    }

    var path: String { listener.path }

    /// Starts the accept loop on a thread of its own.
    func start() throws {
        guard DetachedThread.start(stackSize: 1 << 20, { [self] in acceptLoop() }) else {
            throw HostError(.system, "no thread to accept connections on \(listener.path)")
        }
    }

    /// Stops accepting and removes the socket file; open connections end at their next
    /// call.
    func stop() {
        state.withLock { $0.stopping = true }
        listener.remove()
    }

    private func acceptLoop() {
        while !state.withLock({ $0.stopping }) {
            let connection: UnixSocket?
            do {
                connection = try listener.accept(timeout: 250)
            } catch {
                logger.error("cannot accept a connection", metadata: ["socket": .string(listener.path), "error": .string(String(describing: error))])
                usleep(50_000)
                continue
            }
            guard let connection else { continue }
            admit(connection)
        }
    }

    private func admit(_ connection: UnixSocket) {
        guard let peer = try? connection.peer() else { return }
        guard admits(peer) else {
            logger.warning("refused a connection from a user who may not ask", metadata: ["socket": .string(listener.path), "uid": .stringConvertible(peer.uid), "pid": .stringConvertible(peer.pid)])
            return
        }
        let admitted = state.withLock { state in
            guard !state.stopping, state.connections < Self.maximumConnections,
                  peer.uid == 0 || state.byUser[peer.uid, default: 0] < Self.maximumConnectionsPerUser
            else { return false }
            state.connections += 1
            state.byUser[peer.uid, default: 0] += 1
            return true
        }
        guard admitted else { return }
        let release: @Sendable () -> Void = { [self] in
            state.withLock { state in
                state.connections -= 1
                state.byUser[peer.uid, default: 1] -= 1
                if state.byUser[peer.uid] == 0 { state.byUser[peer.uid] = nil }
            }
        }
        let started = DetachedThread.start(stackSize: 512 << 10) { [self] in
            defer { release() }
            converse(with: connection, peer: peer)
        }
        if !started {
            release()
            logger.warning("closed a connection: no thread to serve it on", metadata: ["socket": .string(listener.path)])
        }
    }

    private func converse(with connection: UnixSocket, peer: PeerCredentials) {
        var reader = VarlinkFrameReader()
        for _ in 0..<Self.maximumCallsPerConnection {
            guard !state.withLock({ $0.stopping }) else { return }
            do {
                guard let message = try connection.readFrame(&reader, deadline: .now + Self.idleTimeout) else { return }
                let call = try VarlinkCall(message)
                try handler(call, peer) { reply in
                    guard !call.oneway else { return }
                    try connection.write(reply.encoded, deadline: .now + Self.idleTimeout)
                }
            } catch {
                return
            }
        }
    }
}
