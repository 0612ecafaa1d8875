/// Whether a host name or address stays on this machine: the one rule every part of
/// Latchkey uses to allow plain `http` (RFC 8252 §8.3), a loopback listener, or SMTP
/// without TLS (docs/SECURITY.md, "Loopback").
///
/// A host is loopback when it is
/// - an IPv4 address in dotted-decimal form inside 127.0.0.0/8 (RFC 1122 §3.2.1.3),
/// - the IPv6 address `::1` (RFC 4291 §2.5.3), in any of its spellings, with or without
///   the brackets of a URL (RFC 3986 §3.2.2), or an IPv4-mapped form of a 127/8 address,
/// - or exactly the name `localhost`, in any case (RFC 6761 §6.3).
///
/// It is decided by parsing the address, never by a prefix: `127.attacker.example` and
/// `127.0.0.1.nip.io` are names that anyone's DNS can point anywhere, and a rule that
/// reads `127.` as loopback sends codes and passwords in clear to them. Names under
/// `.localhost` are not loopback here either: whether they resolve to this machine
/// depends on the resolver.
public enum LoopbackHost {
    /// Whether `host` (a URL's host, a listener's address) is loopback.
    public static func contains(_ host: String) -> Bool {
        var text = host
        if text.hasPrefix("["), text.hasSuffix("]"), text.utf8.count >= 2 {
            text = String(text.dropFirst().dropLast())
        }
        guard !text.isEmpty, text.utf8.count <= 64 else { return false }
        if text.lowercased() == "localhost" { return true }
        guard let bytes = IPAddress.bytes(text) else { return false }
        if bytes.count == 4 { return !host.hasPrefix("[") && bytes[0] == 127 }
        if bytes[0..<15].allSatisfy({ $0 == 0 }), bytes[15] == 1 { return true }
        // ::ffff:127.x.y.z, an IPv4-mapped loopback address (RFC 4291 §2.5.5.2).
        return bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
    }
}
