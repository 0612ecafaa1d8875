#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
package import Glibc
import Synchronization

/// The agent's listening socket: bound at a path with mode 0600, or handed over by systemd
/// (socket activation, sd_listen_fds(3)). Closed when the last reference goes; the path is
/// unlinked by ``remove()`` only while it is still this socket.
package final class UnixSocketListener: @unchecked Sendable {
    package let descriptor: Int32
    package let path: String
    /// The bound file's device and inode, to tell it from a socket another agent bound
    /// at the same path later.
    private let identity: (dev_t, ino_t)?

    /// A descriptor held in reserve (on /dev/null) for the moment the process runs out:
    /// then a pending connection cannot be accepted, poll(2) reports it ready again at once,
    /// and the client waits for an answer that never comes while the accept loop spins.
    /// The reserve is given up to accept that connection and close it, so the client sees
    /// the end of the stream at once (the libuv and nginx way).
    private let reserve = Mutex<Int32>(-1)

    private init(descriptor: Int32, path: String, identity: (dev_t, ino_t)?) {
        self.descriptor = descriptor
        self.path = path
        self.identity = identity
        reserve.withLock { $0 = Self.openReserve() }
    }

    deinit {
        close(descriptor)
        reserve.withLock { if $0 >= 0 { close($0) } }
    }

    private static func openReserve() -> Int32 {
        Glibc.open(_PATH_DEVNULL, O_RDONLY | O_CLOEXEC)
    }

    /// Binds at `path`, replacing a stale socket (a killed agent's: nothing accepts on it)
    /// and refusing to replace a live one or anything that is not a socket.
    /// `mode` is 0600 by default (the owner alone may connect; the host's user database
    /// socket is 0666, since every process's NSS lookups connect); `whenTaken` is what the
    /// error for a live socket at `path` advises.
    package static func bind(
        path: String, mode: mode_t = 0o600, whenTaken: String = "stop it with latchkey agent --stop, or choose another --socket"
    ) throws -> UnixSocketListener {
        var address = try UnixSocket.address(path)
        var status = stat()
        if lstat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFSOCK else {
                throw UnixSocketError("\(path) exists and is not a socket; remove it or choose another --socket", errno: 0)
            }
            if let live = try? UnixSocket.connect(path: path) {
                let pid = (try? live.peer().pid).map { " (pid \($0))" } ?? ""
                throw UnixSocketError("a process already serves \(path)\(pid); \(whenTaken)", errno: 0)
            }
            guard unlink(path) == 0 || errno == ENOENT else {
                throw UnixSocketError("cannot remove the stale socket \(path)")
            }
        }
        let descriptor = try UnixSocket.newDescriptor()
        // The socket file is created 0600: on Linux, bind(2) gives the file the mode of the
        // unbound socket's inode (less the umask), which fchmod(2) sets first. It is set
        // again after bind, in case the file system ignored it. The process umask is left
        // alone: it is shared by every thread, and a library that narrows it for a moment
        // makes another thread's mkdir(0700) come out 0600 (issue 49).
        guard fchmod(descriptor, mode) == 0 else {
            let failure = UnixSocketError("cannot set the mode of the socket for \(path)")
            close(descriptor)
            throw failure
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        let bindError = errno
        guard bound == 0 else {
            close(descriptor)
            throw UnixSocketError("cannot bind \(path)", errno: bindError)
        }
        guard chmod(path, mode) == 0, listen(descriptor, 64) == 0, lstat(path, &status) == 0 else {
            let failure = UnixSocketError("cannot listen at \(path)")
            close(descriptor)
            unlink(path)
            throw failure
        }
        return UnixSocketListener(descriptor: descriptor, path: path, identity: (status.st_dev, status.st_ino))
    }

    /// The socket systemd passed (`LISTEN_PID` is this process and `LISTEN_FDS` is 1: the
    /// descriptor is 3), or nil when this process was not socket-activated. systemd owns
    /// the path then, so ``remove()`` leaves it.
    static func systemdSocket(environment: [String: String]) throws -> UnixSocketListener? {
        guard let pid = environment["LISTEN_PID"].flatMap(Int32.init), pid == getpid() else { return nil }
        guard environment["LISTEN_FDS"] == "1" else {
            throw UnixSocketError("systemd passed \(environment["LISTEN_FDS"] ?? "no") sockets; the agent takes exactly one (ListenStream= once)", errno: 0)
        }
        let descriptor: Int32 = 3
        var type: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        var address = sockaddr_un()
        var addressLength = socklen_t(MemoryLayout<sockaddr_un>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &addressLength) }
        }
        guard getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &length) == 0, type == Int32(SOCK_STREAM.rawValue), named == 0,
              address.sun_family == sa_family_t(AF_UNIX)
        else {
            throw UnixSocketError("the descriptor systemd passed is not a Unix stream socket", errno: 0)
        }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        let path = withUnsafeBytes(of: address.sun_path) { raw in
            String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        return UnixSocketListener(descriptor: descriptor, path: path, identity: nil)
    }

    /// The next connection, or nil when none came within `timeout` milliseconds.
    package func accept(timeout: Int32) throws -> UnixSocket? {
        var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let count = poll(&ready, 1, timeout)
        if count < 0, errno != EINTR { throw UnixSocketError("poll") }
        guard count > 0 else { return nil }
        // accept4 is not in Glibc's Swift module: close-on-exec is set right after, and the
        // agent starts no processes.
        let connection = Glibc.accept(descriptor, nil, nil)
        guard connection >= 0 else {
            let failure = errno
            // Descriptors running out: the pending client is closed on, not left waiting.
            if failure == EMFILE || failure == ENFILE {
                shedPendingConnection()
                throw UnixSocketError("accept", errno: failure)
            }
            // A peer that gave up before being accepted does not end the agent.
            if [EAGAIN, EINTR, ECONNABORTED, EPROTO].contains(failure) { return nil }
            throw UnixSocketError("accept", errno: failure)
        }
        _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
        return UnixSocket(descriptor: connection)
    }

    /// Accepts the pending connection with the reserve descriptor and closes it at once,
    /// then takes a new reserve (which may fail while descriptors are short; the next
    /// shortage then waits for the caller's pause instead).
    private func shedPendingConnection() {
        reserve.withLock { reserve in
            guard reserve >= 0 else { return }
            close(reserve)
            let connection = Glibc.accept(descriptor, nil, nil)
            if connection >= 0 { close(connection) }
            reserve = Self.openReserve()
        }
    }

    /// Unlinks the socket file if it is still the one bound here.
    package func remove() {
        guard let identity else { return }
        var status = stat()
        if lstat(path, &status) == 0, status.st_dev == identity.0, status.st_ino == identity.1 {
            unlink(path)
        }
    }
}
