#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A TCP client connection, in clear or through TLS (``TLSClientConnection``, so the
/// system's OpenSSL and trust store, no second TLS library), whose calls block. What makes
/// it safe to hand to a stranger's server is ``interrupt()``: any thread may call it, and
/// it ends whatever call is blocked (a connect, a read of a server that drips a byte a
/// second) at once, which is how a caller keeps one deadline for a whole exchange and is
/// released when its task is cancelled.
///
/// Used by the client's HTTP/1.1 transport; run it on a thread of its own, never on the
/// cooperative pool.
package final class StreamConnection: Sendable {
    private struct State {
        var descriptor: Int32 = -1
        var interrupted = false
        var tls: TLSClientConnection?
        var deadline: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    package init() {}

    deinit { close() }

    /// Connects to `host:port` (each address the resolver gives, in turn) and, when
    /// `tls`, handshakes, verifying the certificate chain and the name `host`. Gives up at
    /// `deadline` or when interrupted. The name lookup itself (`getaddrinfo`) cannot be
    /// interrupted: a caller that must not wait on a slow resolver stops waiting for this
    /// thread instead (the HTTP transport does).
    ///
    /// With `publicAddressesOnly`, each resolved address is checked
    /// (``IPAddressScope/isPublic(_:)``) before it is connected to, and only a public one
    /// is: the check is on the address the socket connects to, so a name that resolves
    /// differently a moment later (DNS rebinding) gains nothing.
    ///
    /// `sourceAddress`, an IPv4 address, is bound before connecting to an IPv4 address
    /// (IPv6 addresses are connected from wherever the kernel picks). Only the benchmark
    /// uses it: its clients come from many loopback addresses, as a provider's clients come
    /// from many hosts, so that a peer's per-address limit sees what it would in service.
    package func connect(
        host: String, port: Int, tls: Bool, trustedCertificatesFile: String? = nil, publicAddressesOnly: Bool = false,
        sourceAddress: String? = nil, deadline: ContinuousClock.Instant
    ) throws {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        // No AI_ADDRCONFIG: glibc does not count loopback as a configured address, so on a
        // host or namespace with only `lo` it would resolve no address at all, even for
        // a provider on 127.0.0.1. Each address is tried in turn instead.
        var results: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, String(port), &hints, &results)
        guard resolved == 0, let first = results else {
            throw CryptoError.connectionFailed(reason: "cannot resolve \(host): \(String(cString: gai_strerror(resolved)))")
        }
        defer { freeaddrinfo(first) }
        var lastError: Int32 = 0
        var refused = 0
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate {
            candidate = info.pointee.ai_next
            try checkInterrupted()
            if publicAddressesOnly {
                guard let address = info.pointee.ai_addr, let bytes = IPAddressScope.bytes(of: address), IPAddressScope.isPublic(bytes) else {
                    refused += 1
                    continue
                }
            }
            let descriptor = Glibc.socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), info.pointee.ai_protocol)
            guard descriptor >= 0 else {
                lastError = errno
                continue
            }
            let adopted = state.withLock { state -> Bool in
                guard !state.interrupted else { return false }
                state.descriptor = descriptor
                return true
            }
            guard adopted else {
                Glibc.close(descriptor)
                throw CryptoError.connectionFailed(reason: "the connection to \(host) was interrupted")
            }
            if let sourceAddress, info.pointee.ai_family == AF_INET {
                guard Self.bind(descriptor, to: sourceAddress) else {
                    lastError = errno
                    closeDescriptor()
                    continue
                }
            }
            let outcome = Self.connect(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen, deadline: deadline, interrupted: { self.isInterrupted })
            if outcome == 0 { break }
            lastError = outcome
            closeDescriptor()
        }
        try checkInterrupted()
        guard let descriptor = state.withLock({ $0.descriptor >= 0 ? $0.descriptor : nil }) else {
            if refused > 0, lastError == 0 {
                throw CryptoError.connectionFailed(reason: "\(host) resolves only to addresses that are not public (loopback, private, link-local or reserved): refused")
            }
            throw CryptoError.connectionFailed(reason: "cannot connect to \(host) port \(port): \(String(cString: strerror(lastError)))")
        }
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        state.withLock { $0.deadline = deadline }
        try Self.bound(descriptor, by: deadline)
        guard tls else { return }
        let session = try Self.withoutSIGPIPE {
            try TLSClientConnection(socket: descriptor, host: host, trustedCertificatesFile: trustedCertificatesFile)
        }
        state.withLock { $0.tls = session }
        try checkInterrupted()
    }

    /// Writes all of `bytes`.
    package func write(_ bytes: Data) throws {
        try checkInterrupted()
        let (descriptor, tls, deadline) = state.withLock { ($0.descriptor, $0.tls, $0.deadline) }
        guard descriptor >= 0 else { throw CryptoError.connectionFailed(reason: "the connection is closed") }
        if let deadline { try Self.bound(descriptor, by: deadline) }
        if let tls {
            // libssl writes with write(2), which raises SIGPIPE when the server has gone.
            try Self.withoutSIGPIPE { try tls.write(bytes) }
            return
        }
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else {
                try checkInterrupted()
                throw CryptoError.connectionFailed(reason: "the server closed the connection while the request was sent: \(String(cString: strerror(errno)))")
            }
            offset += sent
        }
    }

    /// Up to `maximum` bytes as they arrive; empty when the server closed the stream.
    package func read(maximum: Int = 16 * 1024) throws -> Data {
        try checkInterrupted()
        let (descriptor, tls, deadline) = state.withLock { ($0.descriptor, $0.tls, $0.deadline) }
        guard descriptor >= 0 else { throw CryptoError.connectionFailed(reason: "the connection is closed") }
        if let deadline { try Self.bound(descriptor, by: deadline) }
        if let tls {
            do {
                let data = try tls.read(maximum: maximum)
                try checkInterrupted()
                return data
            } catch {
                try checkInterrupted()
                throw error
            }
        }
        var buffer = [UInt8](repeating: 0, count: maximum)
        while true {
            let count = Glibc.recv(descriptor, &buffer, maximum, 0)
            try checkInterrupted()
            if count >= 0 { return Data(buffer.prefix(count)) }
            if errno == EINTR { continue }
            throw CryptoError.connectionFailed(reason: "reading from the server failed: \(String(cString: strerror(errno)))")
        }
    }

    /// Ends any blocked call and every later one with an error; safe from any thread.
    package func interrupt() {
        state.withLock { state in
            state.interrupted = true
            if state.descriptor >= 0 { _ = Glibc.shutdown(state.descriptor, Int32(SHUT_RDWR)) }
        }
    }

    /// Ends TLS and closes the socket.
    package func close() {
        let tls = state.withLock { state -> TLSClientConnection? in
            defer { state.tls = nil }
            return state.tls
        }
        if let tls, !isInterrupted { Self.withoutSIGPIPE { tls.close() } }
        closeDescriptor()
    }

    private var isInterrupted: Bool { state.withLock { $0.interrupted } }

    private func checkInterrupted() throws {
        if isInterrupted { throw CryptoError.connectionFailed(reason: "the connection was interrupted") }
    }

    /// Closed under the lock, so ``interrupt()`` never shuts down a number the system has
    /// already given to another file.
    private func closeDescriptor() {
        state.withLock { state in
            if state.descriptor >= 0 { Glibc.close(state.descriptor) }
            state.descriptor = -1
        }
    }

    /// Each blocking call on `descriptor` waits at most until `deadline` (the socket's
    /// receive and send timeouts set to what is left), so the thread ends by itself when a
    /// server stalls, whether or not anyone interrupts it.
    private static func bound(_ descriptor: Int32, by deadline: ContinuousClock.Instant) throws {
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else { throw CryptoError.connectionFailed(reason: "the deadline passed") }
        let microseconds = max(1000, remaining.components.seconds * 1_000_000 + remaining.components.attoseconds / 1_000_000_000_000)
        var time = timeval(tv_sec: Int(microseconds / 1_000_000), tv_usec: Int(microseconds % 1_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Binds `descriptor` to the IPv4 `address` with a port the kernel picks.
    private static func bind(_ descriptor: Int32, to address: String) -> Bool {
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        guard inet_pton(AF_INET, address, &local.sin_addr) == 1 else {
            errno = EINVAL
            return false
        }
        return withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// A non-blocking connect watched in 50 ms steps, so an interruption is seen quickly;
    /// the socket is blocking again afterwards. 0, or the errno it failed with.
    private static func connect(
        _ descriptor: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t, deadline: ContinuousClock.Instant, interrupted: () -> Bool
    ) -> Int32 {
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(descriptor, F_SETFL, flags) }
        if Glibc.connect(descriptor, address, length) == 0 { return 0 }
        guard errno == EINPROGRESS || errno == EINTR else { return errno }
        while true {
            if interrupted() { return ECANCELED }
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return ETIMEDOUT }
            var watched = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            let milliseconds = min(50, Int32(remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000) + 1)
            let ready = poll(&watched, 1, milliseconds)
            if ready < 0, errno != EINTR { return errno }
            guard ready > 0 else { continue }
            var error: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &size) == 0 else { return errno }
            return error
        }
    }

    /// Runs `body` with SIGPIPE blocked on this thread and takes back a SIGPIPE it raised,
    /// so the process's disposition (an application's, a host's) is never changed.
    private static func withoutSIGPIPE<Value>(_ body: () throws -> Value) rethrows -> Value {
        var pipe = sigset_t()
        sigemptyset(&pipe)
        sigaddset(&pipe, SIGPIPE)
        var pendingBefore = sigset_t()
        sigpending(&pendingBefore)
        let alreadyPending = sigismember(&pendingBefore, SIGPIPE) == 1
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipe, &previous)
        defer {
            var pending = sigset_t()
            sigpending(&pending)
            if !alreadyPending, sigismember(&pending, SIGPIPE) == 1 {
                var now = timespec()
                _ = sigtimedwait(&pipe, nil, &now)
            }
            pthread_sigmask(SIG_SETMASK, &previous, nil)
        }
        return try body()
    }
}
