import Foundation
@testable import LatchkeyIdP
import Testing

/// A sign-in's URLs are written as text without parsing a URL (`ProviderContext.urlText`):
/// the text must be what `URL.appendingPathComponent` writes, for every issuer form, and
/// anything that would need escaping or resolving must take the parsing path.
@Suite("URLs under the issuer, written as text")
struct IssuerURLTextTests {
    static let issuers = [
        "http://127.0.0.1:8080", "http://127.0.0.1:8080/", "https://id.example.com", "https://id.example.com/tenant",
        "https://id.example.com/tenant/", "http://[::1]:9443/a/b", "https://xn--bcher-kva.example:8443/",
    ]

    @Test("for each issuer form and 500 random sign-in paths, the text is appendingPathComponent's")
    func sameAsFoundation() throws {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        for issuerText in Self.issuers {
            let issuer = try #require(URL(string: issuerText))
            for _ in 0..<500 {
                let ticket = String((0..<Int.random(in: 1...120)).map { _ in alphabet.randomElement()! })
                let path = "v1/authenticate/\(ticket)"
                let text = try #require(ProviderContext.appending(path, to: issuer), "\(path) under \(issuerText)")
                #expect(text == issuer.appendingPathComponent(path).absoluteString, "\(path) under \(issuerText)")
            }
        }
    }

    @Test("a path needing escapes or resolution, an empty one, one with a slash at an end, or an issuer with a query or fragment take the parsing path")
    func refusedForms() throws {
        let issuer = try #require(URL(string: "https://id.example.com/tenant"))
        for path in ["", "/v1/x", "v1/x/", "v1/a b", "v1/%41", "v1/../x", "v1/./x", "v1/x?y=1", "v1/x#f", "v1/é", "v1/x.y", "v1/~x", "v1/x+y"] {
            #expect(ProviderContext.appending(path, to: issuer) == nil, "\(path)")
        }
        for text in ["https://id.example.com/?q=1", "https://id.example.com/#f"] {
            #expect(ProviderContext.appending("v1/x", to: try #require(URL(string: text))) == nil, "\(text)")
        }
    }
}
