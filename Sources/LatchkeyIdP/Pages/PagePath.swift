/// The paths of the browser pages and their assets, under the issuer (docs/PROTOCOL.md
/// section 9). The sign-in page is `/authorize` and the registration page the bind link,
/// both answered as HTML to a browser; the device page is RFC 8628's `verification_uri`.
enum PagePath {
    static let stylesheet = "assets/latchkey.css"
    static let script = "assets/latchkey.js"
    static let signUp = "signup"
    static let recovery = "recovery"
    /// The request header the page script sends its ``PageTicket`` in.
    static let tokenHeader = "Latchkey-Page-Token"
}
