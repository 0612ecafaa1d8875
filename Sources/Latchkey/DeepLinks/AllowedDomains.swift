/// The domains an ``Embedded`` instance may talk to: bind and authenticate URLs, and the
/// providers named to ``Embedded/authorize(issuer:clientID:redirectURI:scopes:credential:)``,
/// must have a host equal to an entry or under it (`example.com` allows `id.example.com`).
/// IP addresses match exactly. An empty list allows nothing.
///
/// Checked before any request, so a link from a hostile page cannot make the app contact
/// (or post a signature to) a host the app did not expect.
struct AllowedDomains: Sendable {
    let domains: [String]

    init(_ domains: [String]) {
        self.domains = domains.map { Self.normalise($0) }.filter { !$0.isEmpty }
    }

    static func normalise(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        while host.hasSuffix(".") { host.removeLast() }
        return host
    }

    func allows(_ host: String) -> Bool {
        let host = Self.normalise(host)
        guard !host.isEmpty else { return false }
        return domains.contains { domain in
            host == domain || (!Self.isAddress(domain) && host.hasSuffix("." + domain))
        }
    }

    func check(_ provider: ProviderAddress) throws {
        guard allows(provider.host) else {
            throw LatchkeyError.domainNotAllowed(reason: "\(provider.host) is not among this app's allowed domains; nothing was sent to it"
            )
        }
    }

    private static func isAddress(_ host: String) -> Bool {
        host.contains(":") || host.split(separator: ".").allSatisfy { UInt8($0) != nil }
    }
}
