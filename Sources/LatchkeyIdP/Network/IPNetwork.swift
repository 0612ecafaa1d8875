import Foundation
import LatchkeyCrypto
#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 network in CIDR form (`10.0.0.0/8`, `fd00::/8`, or one address), for
/// ``ProviderConfiguration/trustedProxies``.
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The network's address bytes (4 or 16).
    let bytes: [UInt8]
    let prefixLength: Int

    /// Parses `a.b.c.d[/n]` or an IPv6 address `[/n]`; nil when it is neither.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress.bytes(String(parts[0])) else { return nil }
        let bits = address.count * 8
        if parts.count == 2 {
            guard let length = Int(parts[1]), (0...bits).contains(length) else { return nil }
            prefixLength = length
        } else {
            prefixLength = bits
        }
        bytes = address
    }

    /// Whether the address in `text` lies in this network.
    func contains(_ text: String) -> Bool {
        guard let address = IPAddress.bytes(text), address.count == bytes.count else { return false }
        var remaining = prefixLength
        for (mine, theirs) in zip(bytes, address) where remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xFF : ~(0xFF >> UInt8(remaining))
            guard mine & mask == theirs & mask else { return false }
            remaining -= 8
        }
        return true
    }

    public var description: String {
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) } != nil
        let text = written ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
        return "\(text)/\(prefixLength)"
    }
}
