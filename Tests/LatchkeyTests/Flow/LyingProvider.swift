import Foundation
import Hummingbird
import Synchronization
import LatchkeyTestSupport

/// An OpenID provider that lies, on Hummingbird in-process (real HTTP on 127.0.0.1): its
/// discovery document names endpoints elsewhere, or it answers too slowly. For the attacks
/// of docs/SECURITY.md, "Links and providers", on the client.
enum LyingProvider {
    enum Lie: Sendable {
        /// Discovery with these members replaced; `{base}` in a value is the server's own
        /// base URL, `{other}` that of a second server that records what reaches it.
        case endpoints([String: String])
        /// Discovery answered with its headers at once, then one byte every 300 ms.
        case trickle
        /// Discovery answered whole, but only after `seconds`.
        case slow(seconds: Int)
    }

    /// Runs the lying provider and a bystander server for `body`, which gets the lying
    /// issuer and returns what the client threw; returns that, and how many requests
    /// reached the bystander.
    static func run(_ lie: Lie, _ body: @escaping @Sendable (URL) async -> (any Error)?) async throws -> (thrown: (any Error)?, bystanderHits: Int) {
        let bystanderHits = Hits()
        let bystander = Router()
        bystander.on("{path+}", method: .get) { _, _ in
            bystanderHits.add()
            return Response(status: .notFound)
        }
        bystander.on("{path+}", method: .post) { _, _ in
            bystanderHits.add()
            return Response(status: .notFound)
        }
        let thrown = try await LiveServer.run(bystander, label: "bystander") { other in
            let router = Router()
            router.get(".well-known/openid-configuration") { request, _ in
                let base = "http://\(request.head.authority ?? "127.0.0.1")"
                switch lie {
                case .endpoints(let replaced):
                    var document = [
                        "issuer": base,
                        "authorization_endpoint": "\(base)/authorize",
                        "token_endpoint": "\(base)/token",
                        "jwks_uri": "\(base)/jwks",
                        "userinfo_endpoint": "\(base)/userinfo",
                        "revocation_endpoint": "\(base)/revoke",
                    ]
                    for (member, value) in replaced {
                        document[member] = value.replacingOccurrences(of: "{base}", with: base).replacingOccurrences(of: "{other}", with: other.absoluteString)
                    }
                    return json(String(decoding: try JSONSerialization.data(withJSONObject: document), as: UTF8.self))
                case .trickle:
                    return Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody { writer in
                        for _ in 0..<40 {
                            try await writer.write(ByteBuffer(string: " "))
                            try await Task.sleep(for: .milliseconds(300))
                        }
                        try await writer.finish(nil)
                    })
                case .slow(let seconds):
                    try await Task.sleep(for: .seconds(seconds))
                    return json("{}")
                }
            }
            // Whatever the client tries next on the liar itself is refused plainly.
            router.on("{path+}", method: .get) { _, _ in Response(status: .notFound) }
            router.on("{path+}", method: .post) { _, _ in Response(status: .notFound) }
            return try await LiveServer.run(router, label: "lying-provider") { SendableError(await body($0)) }.error
        }
        return (thrown, bystanderHits.count)
    }

    static func json(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    final class Hits: Sendable {
        private let value = Mutex(0)
        func add() { value.withLock { $0 += 1 } }
        var count: Int { value.withLock { $0 } }
    }

    /// An error carried out of a server's lifetime.
    struct SendableError: @unchecked Sendable {
        let error: (any Error)?
        init(_ error: (any Error)?) { self.error = error }
    }
}
