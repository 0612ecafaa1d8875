import Foundation
import Latchkey
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import Logging
import LatchkeyTestSupport
import Synchronization
import Testing

/// A real transport that also keeps what was sent, so a test can assert on the traffic.
final class RecordingTransport: HTTPTransport {
    private let inner = HTTP1Transport()
    private let sent = Mutex<[TransportRequest]>([])

    var requests: [TransportRequest] { sent.withLock { $0 } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        sent.withLock { $0.append(request) }
        return try await inner.send(request)
    }
}

/// Counts calls, for "called exactly once".
final class CallCounter<Value: Sendable>: Sendable {
    private let state = Mutex<[Value]>([])
    func record(_ value: Value) { state.withLock { $0.append(value) } }
    var values: [Value] { state.withLock { $0 } }
}

extension ProviderHarness {
    /// Runs the provider with a fresh temporary vault for `body`.
    static func withVault(
        engine: TestStore? = nil,
        _ configure: @Sendable (inout ProviderConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (ProviderHarness, TemporaryVault) async throws -> Void
    ) async throws {
        let vault = try TemporaryVault()
        defer { vault.cleanUp() }
        try await run(engine, configure) { provider in try await body(provider, vault) }
    }

    /// `authenticate(issuer:…)` as the `latchkey-cli` client.
    func signIn(_ embedded: Embedded, credential: String? = nil) async throws -> Tokens {
        try await embedded.authenticate(issuer: issuer, clientID: "latchkey-cli", redirectURI: Self.callback, credential: credential)
    }
}
