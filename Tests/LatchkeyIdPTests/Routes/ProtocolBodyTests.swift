import Foundation
import HTTPTypes
import HummingbirdTesting
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import NIOCore
import Testing

/// Request bodies are decoded into the protocol's types: a body of the wrong shape or with
/// a member of the wrong type is `400 invalid_request`, never a 500 and never half-read.
/// In-process (``RouteTests/withRouter(_:_:)``): decoding is the point, not the socket.
@Suite("Provider: request bodies of the wrong shape")
struct ProtocolBodyTests {
    @Test("wrong-typed or malformed bodies are 400 invalid_request on every JSON endpoint")
    func wrongShapes() async throws {
        try await RouteTests.withRouter({ $0.selfRegistration = true }) { client, _ in
            let json: HTTPFields = [.contentType: ProtocolPath.jsonMediaType]
            var admin = json
            admin[.authorization] = "Bearer \(ProviderHarness.adminToken)"
            let cases: [(String, String, HTTPFields)] = [
                ("v1/signup", #"{"username": 5}"#, json),
                ("v1/recovery", #"["ada"]"#, json),
                ("v1/transfers", #"{"credential": {"id": "x"}}"#, json),
                ("v1/transfers/redeem", #"{"code": null}"#, json),
                ("v1/recovery", "not json", json),
                ("admin/identities", #"{"username": "ada", "email": 7}"#, admin),
            ]
            for (path, body, headers) in cases {
                let response = try await client.execute(uri: "/" + path, method: .post, headers: headers, body: ByteBuffer(string: body))
                let error = try? RouteTests.decode(OAuthErrorResponse.self, response).error
                #expect(response.status == .badRequest && error == .invalidRequest, "\(path) \(body): \(response.status) \(String(buffer: response.body))")
            }
        }
    }
}
