import Foundation
import LatchkeyCrypto

/// The client address behind trusted proxies (docs/SECURITY.md, "Trusted proxies"): the
/// hops of the one configured ``ForwardedHeader``, read from the right, skipping hops
/// that are trusted proxies themselves; the first untrusted hop is the client. Only a
/// request whose peer is a trusted proxy is read this way: anyone else could write any
/// address into those headers.
enum ForwardedFor {
    static func client(peer: String, header: ForwardedHeader, lines: [String], trusted: [IPNetwork]) -> String {
        guard trusted.contains(where: { $0.contains(peer) }) else { return peer }
        for hop in header.hops(lines).reversed() {
            // A hop that is not an address (a hidden identifier, garbage) ends the walk:
            // nothing to its left can be trusted, so the last trusted proxy's word is used.
            guard IPAddress.bytes(hop) != nil else { return peer }
            if !trusted.contains(where: { $0.contains(hop) }) { return hop }
        }
        return peer
    }
}
