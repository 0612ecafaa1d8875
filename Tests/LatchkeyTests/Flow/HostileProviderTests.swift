import Foundation
import Hummingbird
import Latchkey
import Logging
import ServiceLifecycle
import LatchkeyTestSupport
import Testing
import LatchkeyOAuth

/// A provider that answers the bind protocol with hostile replies, on Hummingbird in-process
/// (a real server over real HTTP), to check that the facade refuses each one with a typed
/// error, sends nothing where it should not, and leaves no key behind.
@Suite("Embedded: hostile provider answers")
struct HostileProviderTests {
    static let options = """
    {"publicKey": {"rp": {"id": "127.0.0.1", "name": "Hostile"}, "user": {"id": "dXNlcg", "name": "u", "displayName": "U"},
     "challenge": "Y2hhbGxlbmdlLWNoYWxsZW5nZS1jaGFsbGVuZ2UtMzI", "pubKeyCredParams": [{"type": "public-key", "alg": -7}]},
    """

    static func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// Runs the hostile server; `body` gets its base URL.
    static func withServer(_ body: @escaping @Sendable (URL) async throws -> Void) async throws {
        let router = Router()
        let base = "http://127.0.0.1"
        router.get("v1/bind/foreign-submit") { _, _ in json(options + #""submit": "http://127.0.0.2:9/steal"}"#) }
        router.get("v1/bind/foreign-step") { _, _ in
            json(#"{"step": {"name": "verify-code", "submit": "https://evil.example/code", "fields": [{"name": "code", "required": true}]}}"#)
        }
        router.get("v1/bind/step-loop") { request, _ in
            let port = request.head.authority ?? ""
            return json(#"{"step": {"name": "verify-code", "submit": "\#(base.replacingOccurrences(of: "127.0.0.1", with: port))/v1/bind/step-loop", "fields": [{"name": "code", "required": true}]}}"#)
        }
        router.post("v1/bind/step-loop") { request, _ in
            let port = request.head.authority ?? ""
            return json(#"{"step": {"name": "verify-code", "submit": "\#(base.replacingOccurrences(of: "127.0.0.1", with: port))/v1/bind/step-loop", "fields": [{"name": "code", "required": true}]}}"#)
        }
        router.get("v1/bind/not-json") { _, _ in Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "<html>hello</html>"))) }
        router.get("v1/bind/huge") { _, _ in json("{\"pad\": \"" + String(repeating: "a", count: 2 << 20) + "\"}") }
        router.get("v1/bind/deep") { _, _ in json(String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)) }
        router.get("v1/bind/bad-options") { _, _ in json(#"{"publicKey": {"challenge": 5}, "submit": "/x"}"#) }
        router.get("v1/bind/wrong-confirmation") { request, _ in
            json(options + #""submit": "http://\#(request.head.authority ?? "")/v1/bind/wrong-confirmation"}"#)
        }
        router.post("v1/bind/wrong-confirmation") { _, _ in json(#"{"credential": {"id": "c29tZW9uZS1lbHNl"}}"#, status: .created) }
        router.get("v1/bind/error-html") { _, _ in Response(status: .internalServerError, body: .init(byteBuffer: ByteBuffer(string: "<h1>oops</h1>"))) }

        try await LiveServer.run(router, label: "hostile-provider", body)
    }

    @Test("each hostile bind answer is refused with its code; nothing is left in the vault", arguments: [
        ("foreign-submit", "malformedResponse", 1),
        ("foreign-step", "malformedResponse", 1),
        ("step-loop", "malformedResponse", 17),
        ("not-json", "malformedResponse", 1),
        ("huge", "malformedResponse", 1),
        ("deep", "malformedResponse", 1),
        ("bad-options", "malformedResponse", 1),
        ("wrong-confirmation", "malformedResponse", 2),
        ("error-html", "providerError", 1),
    ])
    func hostileBind(_ job: String, code: String, requests: Int) async throws {
        let vault = try TemporaryVault()
        defer { vault.cleanUp() }
        try await Self.withServer { base in
            let transport = RecordingTransport()
            let embedded = try vault.embedded(allowing: ["127.0.0.1"], stepHandler: { _ in .code("123456") }, transport: transport)
            let link = try #require(URL(string: "\(base.absoluteString)/v1/bind/\(job)?token=tok"))
            let error = await #expect(throws: LatchkeyError.self) { try await embedded.registerCredential(from: link) }
            #expect(error?.code.description == code, "\(job): \(String(describing: error))")
            #expect(transport.requests.count == requests, "\(job)")
            #expect(transport.requests.allSatisfy { $0.url.host == "127.0.0.1" && $0.url.port == base.port }, "\(job)")
            #expect(try await embedded.credentials().isEmpty, "\(job)")
        }
    }
}
