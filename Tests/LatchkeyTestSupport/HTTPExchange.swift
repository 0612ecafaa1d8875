public import Foundation
public import LatchkeyOAuth
import LatchkeyProtocol

/// One HTTP request from a test, over a real socket with the library's own transport, and
/// what came back: the one helper the provider's and the facade's tests share (a raw form
/// POST, a JSON POST, a GET with a token) instead of a copy per suite. Tests that need a
/// client no HTTP library would be use ``RawConnection``.
public enum HTTPExchange {
    /// Sends `body` as it is.
    public static func send(_ method: String, _ url: URL, headers: [String: String] = [:], body: Data? = nil) async throws -> TransportResponse {
        try await HTTP1Transport().send(TransportRequest(method: method, url: url, headers: headers, body: body))
    }

    /// A form POST (`application/x-www-form-urlencoded`, RFC 6749 §B), as every OAuth
    /// endpoint takes; `headers` are added (a DPoP proof, client authentication).
    public static func form(_ url: URL, _ items: [(String, String)], headers: [String: String] = [:]) async throws -> TransportResponse {
        var all = headers
        all["Content-Type"] = "application/x-www-form-urlencoded"
        return try await send(HTTPMethod.post, url, headers: all, body: FormEncoding.encode(items))
    }

    /// A JSON POST (the provider's own API and pages).
    public static func json(_ url: URL, _ body: JSONValue, headers: [String: String] = [:]) async throws -> TransportResponse {
        try await json(url, data: try body.json(), headers: headers)
    }

    /// A JSON POST of an encodable value.
    public static func json(_ url: URL, encoding value: some Encodable, headers: [String: String] = [:]) async throws -> TransportResponse {
        try await json(url, data: try JSONEncoder().encode(value), headers: headers)
    }

    private static func json(_ url: URL, data: Data, headers: [String: String]) async throws -> TransportResponse {
        var all = headers
        all["Content-Type"] = ProtocolPath.jsonMediaType
        return try await send(HTTPMethod.post, url, headers: all, body: data)
    }
}

extension TransportResponse {
    /// The body as JSON, or an empty object when it is not JSON.
    public var json: JSONValue { (try? JSONValue(json: body)) ?? [:] }

    /// The body as text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The OAuth `error` member of the body (RFC 6749 §5.2), when there is one.
    public var errorCode: String? { json.errorCode }
}

extension JSONValue {
    /// The OAuth `error` member of an error object (RFC 6749 §5.2), when there is one.
    public var errorCode: String? { self["error"]?.stringValue }
}
