#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import Logging
import LatchkeyCrypto
import Glibc
import Synchronization

extension KeyAgent {
    /// Where an agent listens by default: `$XDG_RUNTIME_DIR/latchkey/agent.sock` (the
    /// user's runtime directory, private and gone at logout), else
    /// `/tmp/latchkey-<uid>/agent.sock`.
    public static func defaultSocketPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return runtime + "/latchkey/agent.sock"
        }
        return "/tmp/latchkey-\(getuid())/agent.sock"
    }

    /// Makes the socket's directory (0700) when it is the default one, and refuses one
    /// another user owns or that is a symbolic link: in `/tmp`, someone else could have
    /// made it first.
    static func prepareDirectory(of path: String, isDefault: Bool) throws {
        let directory = PathText.parent(of: path)
        var status = stat()
        if lstat(directory, &status) != 0 {
            guard isDefault, errno == ENOENT else { throw UnixSocketError("no directory \(directory) for the agent's socket") }
            let parent = PathText.parent(of: directory)
            guard access(parent, W_OK) == 0 else { throw UnixSocketError("cannot make \(directory)") }
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST, lstat(directory, &status) == 0 else {
                throw UnixSocketError("cannot make \(directory)")
            }
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw UnixSocketError("\(directory) is not a directory (a symbolic link?); the agent's socket goes in a directory of your own", errno: 0)
        }
        if isDefault {
            guard status.st_uid == getuid() else {
                throw UnixSocketError("\(directory) belongs to uid \(status.st_uid), not you; remove it or choose --socket", errno: 0)
            }
            if status.st_mode & 0o077 != 0, chmod(directory, 0o700) != 0 {
                throw UnixSocketError("cannot make \(directory) private")
            }
        }
    }

    /// Starts listening: on the socket systemd passed, if this process was socket-activated,
    /// else at `path` (default ``defaultSocketPath(environment:)``), replacing a stale
    /// socket there. Returns the path clients use.
    public func listen(at path: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        let listener: UnixSocketListener
        do {
            if let activated = try UnixSocketListener.systemdSocket(environment: environment) {
                listener = activated
            } else {
                let chosen = path ?? Self.defaultSocketPath(environment: environment)
                try Self.prepareDirectory(of: chosen, isDefault: path == nil)
                listener = try UnixSocketListener.bind(path: chosen)
            }
        } catch let error as UnixSocketError {
            throw LatchkeyError.agent(reason: error.reason, underlying: error)
        }
        listening.withLock { $0 = listener }
        return listener.path
    }

    /// Serves until ``stop()`` (a `stop` request, or the caller on a signal), then removes
    /// the socket file. The accept loop runs on a thread of its own.
    public func serve() async {
        guard let listener = listening.withLock({ $0 }) else { return }
        if let ssh = sshListening.withLock({ $0 }) {
            if !DetachedThread.start({ [self] in serve(on: ssh, ssh: true) }) {
                configuration.logger.error("agent cannot serve \(ssh.path): no thread to accept connections on")
            }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let started = DetachedThread.start { [self] in
                serve(on: listener)
                continuation.resume()
            }
            if !started {
                configuration.logger.error("agent cannot serve \(listener.path): no thread to accept connections on")
                continuation.resume()
            }
        }
    }
}
