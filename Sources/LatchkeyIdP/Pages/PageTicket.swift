import Foundation
import HTTPTypes
import Hummingbird
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyWebAuthn

/// The per-page token a page's script sends with each state-changing request
/// (``PagePath/tokenHeader``): sealed like the sign-in tickets (``TicketSealer``), naming
/// the page and bound to the flow it serves (the sign-in session's ticket, the bind job),
/// and short-lived. With the `Origin` check it makes a request from anywhere but our own
/// page refused before it is read (docs/SECURITY.md, "Browser pages").
struct PageTicket: Codable, Sendable {
    /// Which page: ``Kind``.
    var kind: String
    /// SHA-256 of the flow's identifier; empty for a page that starts a flow.
    var binding: Data
    var expiresAt: Date

    static let purpose = "page"
    /// Long enough to read a page and use a passkey; a reload makes a new one.
    static let lifetime: TimeInterval = 30 * 60

    /// The pages.
    enum Kind: String, Sendable {
        case signIn = "sign-in"
        case bind
        case device
        case signUp = "sign-up"
        case recovery
    }

    /// A new token for page `kind` serving the flow `binding` ("" for none).
    static func token(_ kind: Kind, binding: String, context: ProviderContext, now: Date = ProviderClock.now) throws -> String {
        let ticket = PageTicket(kind: kind.rawValue, binding: try ProviderContext.hash(binding), expiresAt: now.addingTimeInterval(lifetime))
        return try context.tickets.seal(ticket, purpose: purpose)
    }

    /// Refuses a browser's request that did not come from our page `kind` for the flow
    /// `binding`; lets every other client through. Answers whether it was the page.
    ///
    /// A request is a browser's when it carries `Origin`, `Sec-Fetch-Site` or the page
    /// token (a browser sends `Origin` with every `fetch` POST, and a form POST from
    /// another site too, as `null` under `Referrer-Policy: no-referrer`): its origin must
    /// then be the issuer's exactly (RFC 6454 §7), `Sec-Fetch-Site` `same-origin` when
    /// sent (Fetch Metadata), and the token must be this page's for this flow. The CLI
    /// and other API clients send none of these and hold capabilities of their own; a
    /// cross-site request cannot drop `Origin`, so it cannot pass for one of them.
    @discardableResult
    static func check(_ request: Request, _ kind: Kind, binding: String, context: ProviderContext, now: Date = ProviderClock.now) throws -> Bool {
        let origin = request.headers[.origin]
        let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!]
        let token = request.headers[HTTPField.Name(PagePath.tokenHeader)!]
        guard origin != nil || site != nil || token != nil else { return false }
        guard let origin, context.relyingParty.origins.contains(origin) else {
            throw ProviderError.accessDenied("a request from another origin is refused")
        }
        if let site, site != "same-origin" {
            throw ProviderError.accessDenied("a request from another site is refused")
        }
        guard let token, let ticket = try context.tickets.open(PageTicket.self, from: token, purpose: purpose),
              ticket.kind == kind.rawValue, ticket.expiresAt > now,
              ConstantTime.isEqual(ticket.binding, try ProviderContext.hash(binding))
        else {
            throw ProviderError.accessDenied("this page has expired or is not the one for this request; reload it")
        }
        return true
    }
}
