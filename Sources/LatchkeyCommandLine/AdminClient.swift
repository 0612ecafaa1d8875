#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif
import Latchkey
import LatchkeyOAuth
package import LatchkeyProtocol

/// `latchkey admin`'s use of the admin API (``AdminAPIClient``): a refusal or a malformed
/// answer becomes a one-line failure with the provider's words, made safe to print.
package struct AdminClient: Sendable {
    let client: AdminAPIClient

    package init(issuer: URL, token: String) {
        client = AdminAPIClient(issuer: issuer, token: token)
    }

    package func send<Body, Answer>(
        _ endpoint: AdminAPI.Endpoint<Body, Answer>, _ parameters: [String], query: [(String, String)] = [], body: Body? = nil
    ) async throws -> Answer {
        let reply = try await client.call(endpoint, parameters, query: query, body: body)
        guard (200..<300).contains(reply.status) else {
            let said = reply.refusal?.errorDescription ?? reply.refusal?.error?.rawValue ?? "HTTP \(reply.status)"
            throw CommandFailure("the provider refused: \(said.displaySafe(maximumLength: 512))")
        }
        guard let answer = reply.answer else { throw CommandFailure("the provider's answer to \(endpoint.template) is malformed") }
        return answer
    }

    package func send<Body, Answer>(_ endpoint: AdminAPI.Endpoint<Body, Answer>, _ parameters: String..., body: Body? = nil) async throws -> Answer {
        try await send(endpoint, parameters, body: body)
    }
}
