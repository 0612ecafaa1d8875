import Foundation

/// The client address behind trusted proxies (docs/SECURITY.md, "Trusted proxies"):
/// `Forwarded` (RFC 7239 §4, its `for=` parameters) or else `X-Forwarded-For`, read from
/// the right, skipping hops that are trusted proxies themselves; the first untrusted hop
/// is the client. Only a request whose peer is a trusted proxy is read this way: anyone
/// else could write any address into those headers.
enum ForwardedFor {
    static func client(peer: String, forwarded: [String], xForwardedFor: [String], trusted: [IPNetwork]) -> String {
        guard trusted.contains(where: { $0.contains(peer) }) else { return peer }
        let hops = forwarded.isEmpty ? xForwardedHops(xForwardedFor) : forwardedHops(forwarded)
        for hop in hops.reversed() {
            // A hop that is not an address (a hidden identifier, garbage) ends the walk:
            // nothing to its left can be trusted, so the last trusted proxy's word is used.
            guard IPNetwork.bytes(hop) != nil else { return peer }
            if !trusted.contains(where: { $0.contains(hop) }) { return hop }
        }
        return peer
    }

    /// `X-Forwarded-For: client, proxy1, proxy2` across one or more header lines.
    static func xForwardedHops(_ lines: [String]) -> [String] {
        lines.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The `for=` values of `Forwarded: for=192.0.2.60;proto=http, for="[2001:db8::1]:4711"`,
    /// without quotes, brackets or port.
    static func forwardedHops(_ lines: [String]) -> [String] {
        lines.flatMap { $0.split(separator: ",") }.compactMap { element in
            for pair in element.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "for" else { continue }
                var value = parts[1].trimmingCharacters(in: .whitespaces)
                if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
                if value.hasPrefix("[") {
                    // [v6]:port or [v6]
                    guard let end = value.firstIndex(of: "]") else { return value }
                    return String(value[value.index(after: value.startIndex)..<end])
                }
                if value.filter({ $0 == ":" }).count == 1, let colon = value.firstIndex(of: ":") {
                    return String(value[..<colon])
                }
                return value
            }
            return nil
        }
    }
}
