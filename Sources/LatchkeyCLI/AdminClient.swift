import Foundation
import Latchkey
import LatchkeyOAuth
import LatchkeyProtocol

/// The reference provider's admin API over HTTP (docs/PROTOCOL.md, "Admin API"), its
/// messages the ``AdminAPI`` types the provider answers with.
struct AdminClient: Sendable {
    let issuer: URL
    let token: String
    let transport = URLSessionTransport()

    /// No request body.
    struct Empty: Encodable {}

    /// Sends `body` as JSON and reads the answer as `answer`; a non-2xx answer is a
    /// one-line failure with the provider's words, made safe to print.
    func send<Answer: Decodable>(
        _ method: String, _ path: String, query: [URLQueryItem] = [], body: (some Encodable)? = Empty?.none, as answer: Answer.Type
    ) async throws -> Answer {
        var headers = ["Authorization": "Bearer \(token)", "Accept": "application/json"]
        var data: Data?
        if let body {
            headers["Content-Type"] = "application/json"
            data = try JSONEncoder().encode(body)
        }
        var url = issuer.appendingPathComponent(path)
        if !query.isEmpty, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            components.queryItems = query
            components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
            url = components.url ?? url
        }
        let response = try await transport.send(TransportRequest(method: method, url: url, headers: headers, body: data))
        guard (200..<300).contains(response.status) else {
            let refusal = try? JSONDecoder().decode(ErrorResponse.self, from: response.body)
            let said = refusal?.errorDescription ?? refusal?.error?.rawValue ?? "HTTP \(response.status)"
            throw CommandFailure("the provider refused: \(said.displaySafe(maximumLength: 512))")
        }
        do {
            return try JSONDecoder().decode(answer, from: response.body)
        } catch {
            throw CommandFailure("the provider's answer to \(path) is malformed")
        }
    }
}
