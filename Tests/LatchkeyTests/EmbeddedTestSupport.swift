import Foundation
import Latchkey
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import Logging
import LatchkeyTestSupport
import Synchronization
import Testing

/// The reference provider in-process on 127.0.0.1 port 0, its admin API over real HTTP,
/// and vaults in temporary directories.
struct ProviderHarness: Sendable {
    static let adminToken = "embedded-tests-admin-token"
    let issuer: URL

    static var callback: URL {
        get throws { try #require(URL(string: "http://127.0.0.1/callback")) }
    }

    /// Runs the provider for `body`.
    static func run(
        _ configure: @Sendable (inout ProviderConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (ProviderHarness) async throws -> Void
    ) async throws {
        var configuration = ProviderConfiguration(adminToken: adminToken)
        configuration.logLevel = .warning
        configure(&configuration)
        try await withReferenceProvider(configuration: configuration) { issuer in
            try await body(ProviderHarness(issuer: issuer))
        }
    }

    /// An admin API call.
    func admin(_ method: String, _ path: String, json: [String: Any]? = nil) async throws -> (Int, [String: Any]) {
        var headers = ["Authorization": "Bearer \(Self.adminToken)"]
        var body: Data?
        if let json {
            headers["Content-Type"] = "application/json"
            body = try JSONSerialization.data(withJSONObject: json)
        }
        let response = try await URLSessionTransport().send(TransportRequest(method: method, url: issuer.appendingPathComponent(path), headers: headers, body: body))
        return (response.status, (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:])
    }

    /// A new identity and its first bind URL.
    func createIdentity(_ username: String = "ada") async throws -> (identity: String, bindURL: URL) {
        let (status, created) = try await admin("POST", "admin/identities", json: ["username": username, "email": "\(username)@example.com"])
        try #require(status == 201, "\(created)")
        let identity = try #require((created["identity"] as? [String: Any])?["id"] as? String)
        return (identity, try #require((created["bindURL"] as? String).flatMap(URL.init(string:))))
    }

    /// Another bind URL for an identity.
    func bindURL(for identity: String, redirect: String? = nil) async throws -> URL {
        var body: [String: Any] = [:]
        if let redirect { body["postBindingRedirectURI"] = redirect }
        let (status, job) = try await admin("POST", "admin/identities/\(identity)/bind-jobs", json: body)
        try #require(status == 201, "\(job)")
        return try #require((job["bindURL"] as? String).flatMap(URL.init(string:)))
    }

    /// The newest code in the provider's outbox (the e-mail stand-in).
    func outboxCode() async throws -> String {
        let (_, outbox) = try await admin("GET", "admin/outbox")
        return try #require((outbox["messages"] as? [[String: Any]])?.last?["code"] as? String)
    }

    func oauthClient() throws -> OAuthClient {
        try OAuthClient(configuration: .init(issuer: issuer, clientID: "latchkey-cli", redirectURI: Self.callback))
    }

    var host: String { issuer.host ?? "" }
    var port: Int { issuer.port ?? 80 }
}

/// A temporary vault directory with a key file, removed by `cleanUp()` or when the last
/// copy goes.
struct TemporaryVault: Sendable {
    let temporary: TemporaryDirectory
    let keyFile: URL

    var directory: URL { temporary.url }

    init() throws {
        temporary = try TemporaryDirectory()
        keyFile = try temporary.keyFile()
    }

    func embedded(
        allowing domains: [String],
        stepHandler: Embedded.StepHandler? = nil,
        transport: any HTTPTransport = URLSessionTransport(),
        pollInterval: Duration = .milliseconds(50),
        configure: (inout Embedded.Configuration) -> Void = { _ in }
    ) throws -> Embedded {
        var logger = Logger(label: "latchkey-tests")
        logger.logLevel = .warning
        var configuration = Embedded.Configuration(
            vaultDirectory: directory.appendingPathComponent("vault"),
            keySource: .keyFile(keyFile),
            allowedDomains: domains,
            stepHandler: stepHandler,
            logger: logger,
            transport: transport
        )
        configuration.transferPollInterval = pollInterval
        configure(&configuration)
        return try Embedded(configuration: configuration)
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A real transport that also keeps what was sent, so a test can assert on the traffic.
final class RecordingTransport: HTTPTransport {
    private let inner = URLSessionTransport()
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
        _ configure: @Sendable (inout ProviderConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (ProviderHarness, TemporaryVault) async throws -> Void
    ) async throws {
        let vault = try TemporaryVault()
        defer { vault.cleanUp() }
        try await run(configure) { provider in try await body(provider, vault) }
    }

    /// `authenticate(issuer:…)` as the `latchkey-cli` client.
    func signIn(_ embedded: Embedded, credential: String? = nil) async throws -> Tokens {
        try await embedded.authenticate(issuer: issuer, clientID: "latchkey-cli", redirectURI: Self.callback, credential: credential)
    }
}
