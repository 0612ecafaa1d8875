import LatchkeyOAuth
import LatchkeyProtocol

/// `application/x-www-form-urlencoded` parameters (WHATWG URL §5.1, the format of RFC 6749
/// §4.1.1 query strings and §4.1.3 token request bodies), decoded once, byte by byte, by
/// LatchkeyOAuth's ``FormEncoding``.
///
/// One decoder serves the query string and the form body alike, on the raw text: Hummingbird's
/// `queryParameters` are already percent-decoded, and decoding them again would read `%2B`
/// (a literal `+`) as a space and `%2541` as `A`.
enum FormURLEncoded {
    /// The parameters of `text`; a repeated parameter (RFC 6749 §3.1) or a malformed one is
    /// `400 invalid_request`.
    static func parse(_ text: Substring) throws(ProviderError) -> [String: String] {
        do {
            return try FormEncoding.decode(text)
        } catch {
            switch error {
            case .malformed:
                throw ProviderError.badRequest(.invalidRequest, "malformed form or query parameters")
            case .repeated(let name):
                throw ProviderError.badRequest(.invalidRequest, "parameter \(Self.printable(name)) repeated")
            }
        }
    }

    /// A parameter name as it may appear in an error message: short and without controls.
    private static func printable(_ name: String) -> String {
        String(name.unicodeScalars.prefix(40).map { $0.properties.generalCategory == .control ? "?" : Character($0) })
    }
}
