#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto

/// The origin and RP ID rules an authenticator must enforce itself (WebAuthn §5.1.3 step 7,
/// §5.1.4.1 step 8 and §13.4.9), since no browser stands between Latchkey and a provider.
enum RelyingPartyIdentifier {
    /// The host of `origin` after checking the scheme: `https`, or `http` only for
    /// `localhost` and loopback addresses (RFC 8252 §8.3).
    static func host(ofOrigin origin: String) throws -> String {
        guard let components = URLComponents(string: origin), let scheme = components.scheme?.lowercased(),
              let host = components.host?.lowercased(), !host.isEmpty,
              components.path.isEmpty || components.path == "/", components.query == nil, components.fragment == nil,
              components.user == nil, components.password == nil
        else {
            throw WebAuthnError.insecureOrigin(reason: "\(origin) is not an origin (scheme://host[:port])")
        }
        switch scheme {
        case "https": return host
        case "http" where LoopbackHost.contains(host): return host
        default:
            throw WebAuthnError.insecureOrigin(reason: "\(origin) is not https (plain http is allowed for loopback hosts only)")
        }
    }

    static func isIPv4(_ host: String) -> Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }

    static func isIPAddress(_ host: String) -> Bool {
        isIPv4(host) || host.contains(":") || host.hasPrefix("[")
    }

    /// Checks that `rpID` may be used from `host` (§5.1.4.1 step 8): the host itself, or a
    /// registrable suffix of it at a dot boundary that is not a public suffix. IP addresses
    /// have no suffixes: the RP ID must then be the address itself.
    static func validate(rpID: String, forHost host: String) throws {
        let rpID = rpID.lowercased()
        func refuse(_ why: String) -> WebAuthnError {
            WebAuthnError.invalidRelyingPartyID(reason: "RP ID \"\(rpID)\" is not valid for \(host): \(why)")
        }
        guard !rpID.isEmpty, rpID.utf8.count <= 253,
              rpID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "." || $0 == ":" || $0 == "[" || $0 == "]") })
        else { throw refuse("not an ASCII host name (use the punycode form)") }
        if isIPAddress(host) || isIPAddress(rpID) {
            guard rpID == host else { throw refuse("an IP address host allows only itself as RP ID") }
            return
        }
        guard rpID == host || host.hasSuffix("." + rpID) else {
            throw refuse("it is neither the host nor a parent domain of it")
        }
        guard rpID == "localhost" || !isPublicSuffix(rpID) else {
            throw refuse("it is a public suffix, shared by unrelated sites")
        }
    }

    /// Multi-label public suffixes in common use (a subset of the Public Suffix List's
    /// ICANN and private sections). Any single label is treated as public too, and so is
    /// any `<generic second level>.<two-letter country code>` such as `co.uk` or `com.au`.
    static let knownPublicSuffixes: Set<String> = [
        "github.io", "gitlab.io", "herokuapp.com", "appspot.com", "blogspot.com", "cloudfront.net",
        "azurewebsites.net", "netlify.app", "vercel.app", "pages.dev", "workers.dev", "web.app",
        "firebaseapp.com", "s3.amazonaws.com", "compute.amazonaws.com", "elasticbeanstalk.com",
        "ngrok.io", "ngrok-free.app", "fly.dev", "onrender.com", "glitch.me", "repl.co",
    ]
    static let genericSecondLevels: Set<String> = [
        "ac", "co", "com", "edu", "gob", "go", "gov", "gv", "ltd", "me", "mil", "ne", "net", "nic", "or", "org", "plc", "sch",
    ]

    static func isPublicSuffix(_ domain: String) -> Bool {
        let labels = domain.split(separator: ".")
        if labels.count <= 1 { return true }
        if knownPublicSuffixes.contains(domain) { return true }
        if labels.count == 2, labels[1].count == 2, genericSecondLevels.contains(String(labels[0])) { return true }
        return false
    }
}
