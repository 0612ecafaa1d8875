#if canImport(Glibc)
import Glibc
#endif

/// IP addresses in text, parsed as the C library parses them (`inet_pton`): an IPv4
/// address in dotted-decimal form only (no `127.1`, no octal or hex parts) or an IPv6
/// address, without brackets. One parser for ``LoopbackHost`` and the provider's
/// networks and forwarded addresses.
package enum IPAddress {
    /// The address's 4 or 16 bytes, or nil when `text` is not an address.
    package static func bytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }
}
