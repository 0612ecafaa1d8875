import Foundation

/// The one request header in which the operator's trusted proxies name the client
/// (docs/SECURITY.md, "Trusted proxies"); `serve --forwarded-header`.
///
/// Exactly one is read, the other ignored: a proxy sets or appends the header it is
/// configured for and passes any other through as the client wrote it (nginx's
/// `$proxy_add_x_forwarded_for` leaves a client's own `Forwarded` untouched). Reading
/// both, or preferring one when present, would let a client pick the address it is
/// counted under by sending the header its proxy does not write.
public enum ForwardedHeader: String, Sendable, CaseIterable {
    /// `X-Forwarded-For: client, proxy1, proxy2` (the de facto header; nginx, HAProxy,
    /// most load balancers). The default.
    case xForwardedFor = "x-forwarded-for"
    /// `Forwarded: for=…` (RFC 7239 §4).
    case forwarded

    /// The header's field name.
    public var fieldName: String {
        switch self {
        case .xForwardedFor: "X-Forwarded-For"
        case .forwarded: "Forwarded"
        }
    }

    /// The addresses named by the header's lines, leftmost (farthest from us) first.
    func hops(_ lines: [String]) -> [String] {
        switch self {
        case .xForwardedFor: Self.xForwardedHops(lines)
        case .forwarded: Self.forwardedHops(lines)
        }
    }

    /// `X-Forwarded-For: client, proxy1, proxy2` across one or more header lines.
    static func xForwardedHops(_ lines: [String]) -> [String] {
        lines.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The `for=` values of `Forwarded: for=192.0.2.60;proto=http, for="[2001:db8::1]:4711"`,
    /// without quotes, brackets or port. An element without `for=` is a hop we cannot
    /// name, kept as an empty string so that the walk stops there.
    static func forwardedHops(_ lines: [String]) -> [String] {
        lines.flatMap { $0.split(separator: ",") }.map { element in
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
            return ""
        }
    }
}
