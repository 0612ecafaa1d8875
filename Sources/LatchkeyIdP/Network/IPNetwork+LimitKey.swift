import Foundation
import LatchkeyCrypto

extension IPNetwork {
    /// The key a client address is rate-limited under (docs/SECURITY.md, "Limits"): an
    /// IPv4 address as it is, an IPv6 address by its /64, the smallest network a host is
    /// usually given (RFC 6177 §2, RFC 7421), so a host cannot mint a fresh bucket per
    /// request from its own prefix. An IPv4-mapped IPv6 address counts as its IPv4 one.
    static func limitKey(for address: String) -> String {
        guard let bytes = IPAddress.bytes(address) else { return address }
        if bytes.count == 4 { return address }
        if bytes.prefix(12) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] {
            return bytes.suffix(4).map(String.init).joined(separator: ".")
        }
        var prefix = Array(bytes.prefix(8))
        prefix += [UInt8](repeating: 0, count: 8)
        return IPNetwork(bytes: prefix, prefixLength: 64).description
    }

    /// The network a client address is counted in where one party may hold many
    /// addresses (docs/SECURITY.md, "Device sign-in"): an IPv4 address by its /24, an IPv6
    /// one by its /48, the block a site is commonly given (RFC 6177 §3), so a crowd from
    /// one hosting block weighs as one. Anything else is its own network.
    static func networkKey(for address: String) -> String {
        guard var bytes = IPAddress.bytes(address) else { return address }
        if bytes.count == 16, bytes.prefix(12) == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF] {
            bytes = Array(bytes.suffix(4))
        }
        let kept = bytes.count == 4 ? 3 : 6
        let prefix = Array(bytes.prefix(kept)) + [UInt8](repeating: 0, count: bytes.count - kept)
        return IPNetwork(bytes: prefix, prefixLength: kept * 8).description
    }

    init(bytes: [UInt8], prefixLength: Int) {
        self.bytes = bytes
        self.prefixLength = prefixLength
    }
}
