import Foundation
import LatchkeyOAuth

/// The reference provider's admin API over HTTP (docs/PROTOCOL.md, "Admin API").
struct AdminClient: Sendable {
    let issuer: URL
    let token: String
    let transport = URLSessionTransport()

    /// Sends a JSON request; a non-2xx answer is a one-line failure with the provider's words.
    func send(_ method: String, _ path: String, query: [URLQueryItem] = [], body: [String: Any]? = nil) async throws -> [String: Any] {
        var headers = ["Authorization": "Bearer \(token)", "Accept": "application/json"]
        var data: Data?
        if let body {
            headers["Content-Type"] = "application/json"
            data = try JSONSerialization.data(withJSONObject: body)
        }
        var url = issuer.appendingPathComponent(path)
        if !query.isEmpty, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            components.queryItems = query
            components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
            url = components.url ?? url
        }
        let response = try await transport.send(TransportRequest(method: method, url: url, headers: headers, body: data))
        let object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:]
        guard (200..<300).contains(response.status) else {
            throw CommandFailure("the provider refused: \(object["error_description"] as? String ?? "HTTP \(response.status)")")
        }
        return object
    }
}
