#if canImport(Glibc)
import Glibc
#endif

/// Whether an IP address is on the public internet, for a server that fetches URLs a
/// stranger names (a client ID metadata document, its JWKS): such a fetch must not reach
/// the host itself, its network or a cloud metadata service (server-side request forgery,
/// draft-ietf-oauth-client-id-metadata-document §8.6).
///
/// Refused: every special-purpose block of the IANA IPv4 and IPv6 registries that is not
/// globally reachable (RFC 6890 and its updates), by prefix: "this network", private
/// (RFC 1918), shared (RFC 6598), loopback, link-local (169.254/16 holds the cloud metadata
/// address), documentation, benchmarking, IETF protocol assignments, multicast, reserved
/// and broadcast; for IPv6 the unspecified and loopback addresses, unique-local (fc00::/7),
/// link-local, site-local, multicast, documentation, discard (100::/64), and the forms that
/// carry an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64 64:ff9b::/96 and /48, 6to4
/// 2002::/16, Teredo 2001::/32), whose IPv4 address could be any of the above.
package enum IPAddressScope {
    /// Whether `bytes` (4 or 16) is a globally reachable unicast address.
    package static func isPublic(_ bytes: [UInt8]) -> Bool {
        switch bytes.count {
        case 4: return isPublicIPv4(bytes)
        case 16: return isPublicIPv6(bytes)
        default: return false
        }
    }

    /// The address a resolved socket address names, 4 or 16 bytes; nil for another family.
    static func bytes(of address: UnsafePointer<sockaddr>) -> [UInt8]? {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
            }
        case AF_INET6:
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
            }
        default:
            return nil
        }
    }

    private static func within(_ bytes: [UInt8], _ prefix: [UInt8], bits: Int) -> Bool {
        for bit in 0..<bits {
            let mask = UInt8(0x80) >> UInt8(bit % 8)
            if bytes[bit / 8] & mask != prefix[bit / 8] & mask { return false }
        }
        return true
    }

    /// IANA IPv4 Special-Purpose Address Registry blocks not globally reachable, and
    /// multicast, reserved and broadcast.
    private static let ipv4Blocks: [([UInt8], Int)] = [
        ([0, 0, 0, 0], 8), ([10, 0, 0, 0], 8), ([100, 64, 0, 0], 10), ([127, 0, 0, 0], 8), ([169, 254, 0, 0], 16),
        ([172, 16, 0, 0], 12), ([192, 0, 0, 0], 24), ([192, 0, 2, 0], 24), ([192, 88, 99, 0], 24), ([192, 168, 0, 0], 16),
        ([198, 18, 0, 0], 15), ([198, 51, 100, 0], 24), ([203, 0, 113, 0], 24), ([224, 0, 0, 0], 4), ([240, 0, 0, 0], 4),
    ]

    private static func isPublicIPv4(_ bytes: [UInt8]) -> Bool {
        !ipv4Blocks.contains { within(bytes, $0.0, bits: $0.1) }
    }

    private static let ipv6Blocks: [([UInt8], Int)] = {
        func prefix(_ leading: [UInt8]) -> [UInt8] { leading + [UInt8](repeating: 0, count: 16 - leading.count) }
        return [
            (prefix([]), 96),  // ::/96: unspecified, loopback, IPv4-compatible
            (prefix([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]), 96),  // IPv4-mapped
            (prefix([0, 0x64, 0xFF, 0x9B]), 32),  // NAT64, well-known and local-use (RFC 6052, 8215)
            (prefix([0x01, 0x00]), 64),  // discard-only (RFC 6666)
            (prefix([0x20, 0x01, 0x00, 0x00]), 32),  // Teredo
            (prefix([0x20, 0x01, 0x00]), 23),  // IETF protocol assignments (2001::/23)
            (prefix([0x20, 0x01, 0x0D, 0xB8]), 32),  // documentation
            (prefix([0x20, 0x02]), 16),  // 6to4
            (prefix([0x3F, 0xFF, 0x00]), 20),  // documentation (RFC 9637)
            (prefix([0xFC]), 7),  // unique-local
            (prefix([0xFE, 0x80]), 10),  // link-local
            (prefix([0xFE, 0xC0]), 10),  // site-local (deprecated)
            (prefix([0xFF]), 8),  // multicast
        ]
    }()

    private static func isPublicIPv6(_ bytes: [UInt8]) -> Bool {
        // Only global unicast (2000::/3) is public at all.
        guard bytes[0] & 0xE0 == 0x20 else { return false }
        return !ipv6Blocks.contains { within(bytes, $0.0, bits: $0.1) }
    }
}
