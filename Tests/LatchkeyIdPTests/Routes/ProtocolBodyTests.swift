import Foundation
import LatchkeyOAuth
import LatchkeyTestSupport
import Testing
import LatchkeyIdP

/// Request bodies are decoded into the protocol's types: a body of the wrong shape or with
/// a member of the wrong type is `400 invalid_request`, never a 500 and never half-read.
@Suite("Provider: request bodies of the wrong shape")
struct ProtocolBodyTests {
    @Test("wrong-typed or malformed bodies are 400 invalid_request on every JSON endpoint")
    func wrongShapes() async throws {
        try await ProviderTests.withProvider(.sqlite, { $0.selfRegistration = true }) { issuer, _ in
            let cases: [(String, String)] = [
                ("v1/signup", #"{"username": 5}"#),
                ("v1/recovery", #"["ada"]"#),
                ("v1/transfers", #"{"credential": {"id": "x"}}"#),
                ("v1/transfers/redeem", #"{"code": null}"#),
                ("v1/recovery", "not json"),
            ]
            for (path, body) in cases {
                let (status, answer) = try await ProviderTests.request("POST", issuer.appendingPathComponent(path), json: Data(body.utf8))
                #expect(status == 400 && answer["error"]?.stringValue == "invalid_request", "\(path) \(body): \(status) \(answer)")
            }
            let admin = ["Authorization": "Bearer \(ProviderTests.adminToken)"]
            let (status, answer) = try await ProviderTests.request(
                "POST", issuer.appendingPathComponent("admin/identities"), json: Data(#"{"username": "ada", "email": 7}"#.utf8), headers: admin
            )
            #expect(status == 400 && answer["error"]?.stringValue == "invalid_request", "\(status) \(answer)")
        }
    }
}
