#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
import LatchkeyProtocol

/// Any link Latchkey acts on, as a desktop hands it over (`latchkey open URL`,
/// docs/PROTOCOL.md section 2.3): what it asks for and which provider it names, read
/// without a single request, so that a person can be told both before anything happens.
///
/// - `bind`: `https://<idp>/v1/bind/<job>?token=…` or `<scheme>://bind?api_base_url=…&job_id=…&token=…`;
/// - `authenticate`: `https://<idp>/v1/authenticate/<session>` or `<scheme>://authenticate?api_base_url=…&session_id=…`;
/// - a device approval: `https://<idp>/device?user_code=…` (RFC 8628 §3.3.1
///   `verification_uri_complete`) or `<scheme>://device?api_base_url=…&user_code=…`;
/// - a transfer: `<scheme>://transfer?api_base_url=…&code=…`, the code another device shows.
///
/// Parsing is strict, as for ``Embedded/registerCredential(from:)``: one value per
/// parameter, identifiers from the URL-safe alphabet, no user info or fragment, and a
/// provider over https (http only on loopback). Values are decoded once: a
/// percent-encoded percent stays a percent, which no identifier or provider URL admits.
public struct DeepLink: Sendable {
    public enum Kind: String, Sendable {
        /// Make a new credential for the account the provider's bind job names.
        case bind
        /// Sign in to a session another app started.
        case authenticate
        /// Approve another device's sign-in (its user code).
        case deviceApproval = "device"
        /// Receive a credential from another device (the code it shows).
        case transfer
    }

    public let kind: Kind
    /// The link as given.
    public let url: URL
    /// The identity provider the link names (its base URL, the issuer of the reference
    /// provider).
    public var provider: URL { address.base }
    /// The user code of a device approval.
    public let userCode: String?
    /// The code of a transfer.
    public let transferCode: String?

    let address: ProviderAddress

    /// Links may be at most this long; longer ones are refused unread.
    public static let maximumLength = ProviderAddress.maximumURLLength

    /// Reads `text` as a link of one of the kinds above. `schemes` are the custom schemes
    /// the caller answers for (lowercase, as registered on the desktop); `https` and `http`
    /// are always read. Throws ``LatchkeyError/Code/invalidArgument`` for anything else (an
    /// unregistered scheme, `file:`, `javascript:`, a malformed or ambiguous link), before
    /// any request.
    public static func parse(_ text: String, schemes: Set<String>) throws -> DeepLink {
        guard text.utf8.count <= maximumLength else {
            throw LatchkeyError.invalidArgument(reason: "the link is \(text.utf8.count) bytes, over the \(maximumLength) a link may have; nothing was opened")
        }
        let shown = text.logSafe(maximumLength: 160)
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
            throw LatchkeyError.invalidArgument(reason: "\(shown) is not a link")
        }
        guard scheme == "https" || scheme == "http" || schemes.contains(scheme) else {
            throw LatchkeyError.invalidArgument(
                reason: "links of scheme \(scheme.logSafe(maximumLength: 64)) are not Latchkey's (it answers https and \(schemes.sorted().joined(separator: ", "))); nothing was opened"
            )
        }
        for kind in [ProviderLink.Kind.bind, .authenticate] {
            if let link = try ProviderLink.parse(url, as: kind) {
                return DeepLink(kind: kind == .bind ? .bind : .authenticate, url: url, userCode: nil, transferCode: nil, address: link.provider)
            }
        }
        if let link = try codeLink(url, scheme: scheme) { return link }
        throw LatchkeyError.invalidArgument(reason: "\(shown) is not a link Latchkey understands (bind, authenticate, device approval or transfer)")
    }

    /// Whether the link's provider is one of `providers`: the same scheme, host and port,
    /// and a path equal to the allowed one's or under it (segment by segment).
    public func isAllowed(by providers: [URL]) -> Bool {
        providers.contains { allowed in
            guard let address = try? ProviderAddress(allowed), address.origin == self.address.origin else { return false }
            let path = address.base.path
            let linkPath = self.address.base.path
            return linkPath == path || linkPath.hasPrefix(path.hasSuffix("/") ? path : path + "/")
        }
    }

    /// A device approval or a transfer: the provider and one code.
    private static func codeLink(_ url: URL, scheme: String) throws -> DeepLink? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              components.user == nil, components.password == nil, components.fragment == nil,
              let query = ProviderLink.uniqueQuery(components)
        else { return nil }
        if scheme == "https" || scheme == "http" {
            // `<base>/device?user_code=…`: the provider's own verification_uri_complete.
            guard components.path.split(separator: "/").last == Substring(ProtocolPath.deviceVerification),
                  Set(query.keys) == ["user_code"], let code = query["user_code"], isUserCode(code)
            else { return nil }
            var base = components
            base.path = String(components.path.dropLast(ProtocolPath.deviceVerification.count))
            base.query = nil
            guard let baseURL = base.url else { return nil }
            return DeepLink(kind: .deviceApproval, url: url, userCode: code, transferCode: nil, address: try ProviderAddress(baseURL))
        }
        guard components.path.isEmpty || components.path == "/", let host = components.host?.lowercased(),
              let baseText = query["api_base_url"], let base = URL(string: baseText), base.scheme != nil
        else { return nil }
        switch host {
        case Kind.deviceApproval.rawValue:
            guard Set(query.keys) == ["api_base_url", "user_code"], let code = query["user_code"], isUserCode(code) else { return nil }
            return DeepLink(kind: .deviceApproval, url: url, userCode: code, transferCode: nil, address: try ProviderAddress(base))
        case Kind.transfer.rawValue:
            guard Set(query.keys) == ["api_base_url", "code"], let code = query["code"], isTransferCode(code) else { return nil }
            return DeepLink(kind: .transfer, url: url, userCode: nil, transferCode: code, address: try ProviderAddress(base))
        default:
            return nil
        }
    }

    /// A user code as the reference provider writes it (`XXXX-XXXX`), or any other
    /// provider's: 4 to 32 ASCII letters, digits and dashes (RFC 8628 §6.1).
    static func isUserCode(_ code: String) -> Bool {
        (4...32).contains(code.utf8.count) && code.utf8.allSatisfy { isASCIIAlphanumeric($0) || $0 == UInt8(ascii: "-") }
    }

    /// A transfer code as shown (`7KQ-4M2-X9A`): 6 to 64 letters, digits, dashes and spaces.
    static func isTransferCode(_ code: String) -> Bool {
        (6...64).contains(code.utf8.count)
            && code.utf8.allSatisfy { isASCIIAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: " ") }
    }

    private static func isASCIIAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
    }
}
