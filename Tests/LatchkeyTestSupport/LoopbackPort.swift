import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Ports for test servers that must know their port before they listen.
public enum LoopbackPort {
    /// A loopback port free now on 127.0.0.1 and on ::1, for a server that must know its
    /// port before it listens (chromedriver; a provider whose issuer names its port).
    /// Chosen below Linux's ephemeral range (32768–60999): a port the kernel hands out for
    /// binding to port 0 is also one it hands to outgoing connections, and with the tests'
    /// thousands of connections such a port was taken between the check and the bind
    /// (a CI run failed so, twice: "Address already in use").
    public static func free() throws -> Int {
        for _ in 0..<200 {
            let port = Int.random(in: 20_000..<32_000)
            if isFree(port, family: AF_INET), isFree(port, family: AF_INET6) { return port }
        }
        throw TestSupportError("no free loopback port between 20000 and 32000")
    }

    /// Whether `port` can be bound on the loopback address of `family` now.
    private static func isFree(_ port: Int, family: Int32) -> Bool {
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        // No IPv6 on this host: nothing can hold the port there.
        guard descriptor >= 0 else { return family == AF_INET6 }
        defer { close(descriptor) }
        if family == AF_INET {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
        }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        address.sin6_port = UInt16(port).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        }
        // ::1 missing (IPv6 off in a container) is as good as free.
        return bound == 0 || errno == EADDRNOTAVAIL
    }
}
