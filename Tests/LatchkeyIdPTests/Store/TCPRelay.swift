import Foundation

/// A TCP relay on a loopback port to another address, which a test can cut and restore:
/// the database "goes away" (every connection through it is reset and new ones are
/// closed at once) and "comes back" on the same address.
///
/// The relay holds its port from the start, listening the whole time, and a cut only
/// stops relaying: a port given up while cut could be taken meanwhile as the local port
/// of another test's connection, and the relay could not bind it again (it failed so).
final class TCPRelay: @unchecked Sendable {
    let port: Int
    private let targetPort: Int
    private let lock = NSLock()
    private let listener: Int32
    private var relaying = false
    private var open: Set<Int32> = []
    /// Pumps finished per connection pair (keyed by the client side): the second closes both.
    private var finished: [Int32: Int] = [:]

    /// Listens on a free loopback port, cut until ``start()``.
    init(targetPort: Int) throws {
        self.targetPort = targetPort
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw RelayError() }
        var address = Self.loopback(0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound, listen(descriptor, 64) == 0 else {
            close(descriptor)
            throw RelayError()
        }
        listener = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [weak self] in
            // Until the listener is closed (deinit), which fails accept.
            var client = accept(descriptor, nil, nil)
            while client >= 0 {
                let accepted = client
                defer { client = accept(descriptor, nil, nil) }
                guard let relay = self, relay.lock.withLock({ relay.relaying }) else {
                    close(accepted)
                    continue
                }
                let upstream = Self.connect(to: targetPort)
                guard upstream >= 0 else {
                    close(accepted)
                    continue
                }
                relay.lock.withLock { relay.open.formUnion([accepted, upstream]) }
                Thread.detachNewThread { relay.pump(from: accepted, to: upstream, pair: accepted) }
                Thread.detachNewThread { relay.pump(from: upstream, to: accepted, pair: accepted) }
            }
        }
    }

    deinit {
        stop()
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Relays new connections.
    func start() {
        lock.withLock { relaying = true }
    }

    /// Resets every relayed connection and closes new ones at once.
    func stop() {
        lock.withLock {
            relaying = false
            for descriptor in open { shutdown(descriptor, Int32(SHUT_RDWR)) }
        }
    }

    private func pump(from source: Int32, to destination: Int32, pair: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = read(source, &buffer, buffer.count)
            guard count > 0, buffer.withUnsafeBytes({ write(destination, $0.baseAddress, count) }) == count else { break }
        }
        lock.withLock {
            shutdown(source, Int32(SHUT_RDWR))
            shutdown(destination, Int32(SHUT_RDWR))
            finished[pair, default: 0] += 1
            if finished[pair] == 2 {
                finished[pair] = nil
                open.remove(source)
                open.remove(destination)
                close(source)
                close(destination)
            }
        }
    }

    private static func loopback(_ port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    private static func connect(to port: Int) -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = loopback(port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        if !connected {
            close(descriptor)
            return -1
        }
        return descriptor
    }

    struct RelayError: Error {}
}
