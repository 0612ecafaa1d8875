import Foundation
import HTTPTypes
import Hummingbird

/// A server-rendered page: one document shape for every page (the provider's name, a
/// heading, the content, a status line and an alert line the script writes to), one
/// stylesheet and one static script, and the page's data for that script as JSON in a
/// `<script type="application/json">` element, never as inline script
/// (docs/SECURITY.md, "Browser pages").
struct Page: Sendable {
    /// Plain text: escaped when rendered.
    var title: String
    /// HTML made only of literals and ``HTMLText`` values.
    var content: String
    /// What the script needs (`kind` says which page it is), or nil for a page without one.
    var data: [Key: PageValue]?
    var status: HTTPResponse.Status = .ok

    /// The document, with the headers every page carries.
    func response(context: ProviderContext) -> Response {
        let name = HTMLText.value(context.configuration.displayName)
        let stylesheet = HTMLText.escape(context.url(PagePath.stylesheet).path)
        let script = HTMLText.escape(context.url(PagePath.script).path)
        var html = """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(HTMLText.escape(HTMLText.visible(title))) · \(HTMLText.escape(HTMLText.visible(context.configuration.displayName)))</title>
            <link rel="stylesheet" href="\(stylesheet)">
            <script src="\(script)" defer></script>
            </head>
            <body>
            <header><p class="provider">\(name)</p></header>
            <main id="main">
            <h1>\(HTMLText.value(title))</h1>
            \(content)
            <p id="status" class="status" role="status" aria-live="polite"></p>
            <p id="error" class="error" role="alert" hidden></p>
            <noscript><p class="error">This page needs JavaScript: passkeys are used through the browser's WebAuthn API.</p></noscript>
            </main>

            """
        if let data {
            html += "<script type=\"application/json\" id=\"page-data\">\(Self.scriptJSON(data))</script>\n"
        }
        html += "</body>\n</html>\n"
        return Response(status: status, headers: Self.headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// The headers of every page: a CSP that allows only this origin's script and style
    /// and no framing, and nothing cached or leaked by referrer. There is no `form-action`:
    /// Chromium applies it to the redirects after a form submission too, which would stop
    /// the redirect to the relying party (the pages submit with `fetch` anyway).
    static let headers: HTTPFields = [
        .contentType: "text/html; charset=utf-8",
        .contentSecurityPolicy: contentSecurityPolicy,
        .xContentTypeOptions: "nosniff",
        .init("Referrer-Policy")!: "no-referrer",
        .init("X-Frame-Options")!: "DENY",
        .init("Cross-Origin-Opener-Policy")!: "same-origin",
        .cacheControl: "no-store",
        .init("Pragma")!: "no-cache",
    ]

    static let contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        + "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

    /// The data as JSON that cannot end its `<script>` element: `<`, `>` and `&` are
    /// written as `\u003c`, `\u003e`, `\u0026` (they can only occur inside strings).
    static func scriptJSON(_ data: [Key: PageValue]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = (try? encoder.encode(data)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return json.replacingOccurrences(of: "<", with: "\\u003c").replacingOccurrences(of: ">", with: "\\u003e")
            .replacingOccurrences(of: "&", with: "\\u0026")
    }
}

extension Page {
    /// The members of a page's data that the script reads.
    enum Key: String, CodingKeyRepresentable, Encodable, Hashable, Sendable {
        /// Which page (``PageTicket/Kind``).
        case kind
        /// The page token (``PageTicket``).
        case token
        /// WebAuthn request options (the sign-in page).
        case options
        /// Where the assertion goes, and where Cancel goes (the sign-in page).
        case submit, cancel
        /// The JSON endpoint a page's flow starts at.
        case start
        /// The device approval page's code lookup.
        case lookup
    }
}

/// One value of a page's data: text, or one of the protocol's own JSON types (WebAuthn
/// options), encoded as the JSON API encodes it.
enum PageValue: Encodable, Sendable {
    case text(String)
    case value(any Encodable & Sendable)

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .text(let text):
            var container = encoder.singleValueContainer()
            try container.encode(text)
        case .value(let value):
            try value.encode(to: encoder)
        }
    }
}
