#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif
import Glibc
import LatchkeyCrypto
import LatchkeyProtocol

/// What the kernel says of the process at the other end of a Unix socket (`SO_PEERCRED`,
/// unix(7)): taken when the connection was made, so a peer cannot change it afterwards.
package struct PeerCredentials: Sendable, Equatable {
    package var pid: Int32
    package var uid: UInt32
    package var gid: UInt32
}

/// A failure of the agent's sockets (connecting, listening, reading, writing), after the
/// template every Latchkey error follows: an open-ended ``code``, a reason, and the
/// system's error (`errno`) kept as ``underlying``.
package struct UnixSocketError: LatchkeyErrorTemplate, Sendable {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let rawValue: String
        package init(_ rawValue: String) { self.rawValue = rawValue }
        package var description: String { rawValue }

        /// A system call failed; ``UnixSocketError/underlying`` holds its errno.
        package static let systemCall = Code("systemCall")
        /// A path or a descriptor that cannot be used as asked (too long, not a socket,
        /// taken by another agent, a directory of someone else's).
        package static let unusable = Code("unusable")
        /// The deadline passed.
        package static let timedOut = Code("timedOut")
        /// The other end closed the connection, or answered something malformed.
        package static let peer = Code("peer")
    }

    package let code: Code
    package let reason: String
    package let underlying: (any Error)?
    package let file: String
    package let line: UInt

    /// `what` failed; with an `errno` other than 0, a ``Code/systemCall`` whose reason
    /// names the system's words and whose underlying error is that errno, else `code`.
    package init(_ what: String, errno number: Int32 = errno, code: Code = .unusable, file: String = #fileID, line: UInt = #line) {
        if number != 0 {
            self.code = .systemCall
            reason = "\(what): \(String(cString: strerror(number)))"
            underlying = POSIXErrorCode(rawValue: number).map { POSIXError($0) }
        } else {
            self.code = code
            reason = what
            underlying = nil
        }
        self.file = file
        self.line = line
    }
}

/// A connected Unix stream socket, closed when the last reference goes. Reads and writes
/// block the calling thread, each bounded by a deadline through poll(2): the agent gives
/// each connection a thread of its own, and a client has one request in flight.
package final class UnixSocket: @unchecked Sendable {
    package let descriptor: Int32
    /// Where ``readFrame(_:deadline:)`` receives into: one per socket, which one thread
    /// reads at a time, rather than one per read.
    private var received = [UInt8](repeating: 0, count: 16 * 1024)

    package init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// The longest path a `sockaddr_un` holds, its terminating zero excluded.
    static let maximumPathLength = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    static func address(_ path: String) throws -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumPathLength, !bytes.contains(0) else {
            throw UnixSocketError("the socket path \(path) is empty or longer than \(maximumPathLength) bytes", errno: 0)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        return address
    }

    static func newDescriptor() throws -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw UnixSocketError("socket") }
        return descriptor
    }

    /// Connects to the socket at `path`.
    package static func connect(path: String) throws -> UnixSocket {
        var address = try address(path)
        let socket = UnixSocket(descriptor: try newDescriptor())
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket.descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else { throw UnixSocketError("cannot connect to \(path)") }
        return socket
    }

    /// The peer's credentials as the kernel recorded them.
    package func peer() throws -> PeerCredentials {
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }, which Glibc's Swift module
        // does not export.
        var credentials: (Int32, UInt32, UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else {
            throw UnixSocketError("SO_PEERCRED")
        }
        return PeerCredentials(pid: credentials.0, uid: credentials.1, gid: credentials.2)
    }

    /// Waits until the socket is readable (or writable), up to `deadline`.
    private func wait(for events: Int16, until deadline: ContinuousClock.Instant?) throws {
        while true {
            var timeout: Int32 = -1
            if let deadline {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { throw UnixSocketError("timed out", errno: 0, code: .timedOut) }
                let (seconds, attoseconds) = left.components
                timeout = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            }
            var descriptor = pollfd(fd: self.descriptor, events: events, revents: 0)
            let ready = poll(&descriptor, 1, timeout)
            if ready > 0 { return }
            if ready < 0, errno != EINTR { throw UnixSocketError("poll") }
        }
    }

    /// Writes all of `data`.
    package func write(_ data: Data, deadline: ContinuousClock.Instant?) throws {
        try data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < raw.count {
                try wait(for: Int16(POLLOUT), until: deadline)
                let sent = send(descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
                if sent < 0 {
                    if errno == EINTR || errno == EAGAIN { continue }
                    throw UnixSocketError("send")
                }
                offset += sent
            }
        }
    }

    /// The next frame body, or nil when the peer closed the connection between frames.
    /// A connection that ends inside a frame, or a bad header, throws.
    package func readFrame(_ reader: inout some StreamFrameReader, deadline: ContinuousClock.Instant?) throws -> Data? {
        while true {
            if let body = try reader.next() { return body }
            try wait(for: Int16(POLLIN), until: deadline)
            let count = recv(descriptor, &received, received.count, Int32(MSG_DONTWAIT))
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw UnixSocketError("recv")
            }
            if count == 0 {
                try reader.finish()
                return nil
            }
            try reader.append(received[0..<count])
        }
    }
}
