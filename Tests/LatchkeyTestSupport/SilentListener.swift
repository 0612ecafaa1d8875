public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback port that listens and never answers, to prove that a command sent nothing
/// to a provider: the kernel completes every connection into the listen backlog whether
/// or not anyone accepts, so ``connectionsMade()`` counts each one that was ever made.
public final class SilentListener: Sendable {
    public let port: Int
    private let descriptor: Int32

    public init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestSupportError("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard bound == 0, named == 0, listen(descriptor, 64) == 0, fcntl(descriptor, F_SETFL, O_NONBLOCK) == 0 else {
            close(descriptor)
            throw TestSupportError("cannot listen on a loopback port: \(errno)")
        }
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(descriptor) }

    /// `http://127.0.0.1:<port>`.
    public var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Connections made since the last call (each is accepted and closed).
    public func connectionsMade() -> Int {
        connectionSources().count
    }

    /// The IPv4 address each connection made since the last call came from (each is
    /// accepted and closed).
    public func connectionSources() -> [String] {
        var sources: [String] = []
        while true {
            var peer = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let connection = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(descriptor, $0, &length) }
            }
            guard connection >= 0 else { return sources }
            close(connection)
            let address = UInt32(bigEndian: peer.sin_addr.s_addr)
            sources.append([24, 16, 8, 0].map { String((address >> $0) & 0xff) }.joined(separator: "."))
        }
    }
}
