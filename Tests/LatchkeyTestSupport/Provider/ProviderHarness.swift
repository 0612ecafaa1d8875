public import Foundation
public import LatchkeyIdP
public import LatchkeyOAuth
public import LatchkeyProtocol
import Logging

/// The reference provider in-process on 127.0.0.1 port 0 over a fresh store of a
/// ``TestStore`` engine, reached over real HTTP: its issuer, a typed admin client
/// (``AdminAPIClient``), its log (``LogCapture``), and a private temporary directory for
/// the test's own files. The one way tests start a provider in-process; `latchkey serve`
/// as a process is ``LatchkeyServe``. Tests of one route's logic that need no socket
/// call the router directly with HummingbirdTesting (LatchkeyIdPTests' `RouteTests`).
public struct ProviderHarness: Sendable {
    public static let adminToken = "harness-admin-token-for-the-provider-tests"

    public let issuer: URL
    public let admin: AdminAPIClient
    /// What the provider logged (at info and above unless `configure` says otherwise).
    public let logs: LogCapture
    /// Removed when the run ends.
    public let directory: TemporaryDirectory

    /// The redirect URI registered for the built-in CLI client (a loopback one, RFC 8252 §7.3).
    public static var callback: URL {
        get throws {
            guard let text = ProviderConfiguration.cliClient.redirectURIs.first, let url = URL(string: text) else {
                throw TestSupportError("the CLI client has no redirect URI")
            }
            return url
        }
    }

    /// Runs the provider for `body` over a fresh store of `engine` (in memory unless one
    /// is given), its log captured in ``logs``; the store is removed afterwards. At most
    /// ``ProviderSlots/count`` run at once.
    public static func run(
        _ engine: TestStore? = nil,
        _ configure: @Sendable (inout ProviderConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (ProviderHarness) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        let logs = LogCapture()
        func start(_ storage: ProviderConfiguration.Storage?, _ storeKey: Data?) async throws {
            var configuration = ProviderConfiguration(adminToken: adminToken)
            configuration.logLevel = .info
            configuration.logHandler = logs.handler
            // The provider and its clients share this process: when the whole suite
            // saturates both cores, URLSession can send a request's body seconds after its
            // head (curl writes it from a read callback), and the default 10-second body
            // deadline answered an honest admin call 408 in a fresh-clone CI run. The
            // tests of the deadline itself set their own.
            configuration.bodyTimeout = 60
            if let storage { configuration.storage = storage }
            if let storeKey { configuration.storeKey = storeKey }
            configure(&configuration)
            try await withReferenceProvider(configuration: configuration) { issuer in
                try await body(ProviderHarness(issuer: issuer, admin: AdminAPIClient(issuer: issuer, token: adminToken), logs: logs, directory: directory))
            }
        }
        try await ProviderSlots.withSlot {
            if let engine {
                try await engine.with { storage, storeKey in try await start(storage, storeKey) }
            } else {
                try await start(nil, nil)
            }
        }
    }

    /// A new identity (`<username>@example.com`) and its first bind URL.
    public func createIdentity(_ username: String = "ada", email: String? = nil) async throws -> (identity: String, bindURL: URL) {
        let reply = try await admin.call(AdminAPI.createIdentity, body: .init(username: username, email: email ?? "\(username)@example.com"))
        guard reply.status == 201, let created = reply.answer, let bindURL = URL(string: created.bindURL) else {
            throw TestSupportError("creating \(username) answered \(reply.status): \(String(decoding: reply.body, as: UTF8.self))")
        }
        return (created.identity.id, bindURL)
    }

    /// Another bind URL for an identity (a `recovery` one with that `kind`).
    public func bindURL(for identity: String, kind: String? = nil, redirect: String? = nil, requireEmailCode: Bool? = nil) async throws -> URL {
        let request = AdminAPI.BindJobRequest(kind: kind, postBindingRedirectURI: redirect, requireEmailCode: requireEmailCode)
        let reply = try await admin.call(AdminAPI.createBindJob, identity, body: request)
        guard reply.status == 201, let job = reply.answer, let url = URL(string: job.bindURL) else {
            throw TestSupportError("a bind job for \(identity) answered \(reply.status): \(String(decoding: reply.body, as: UTF8.self))")
        }
        return url
    }

    /// The messages in the provider's outbox (the e-mail stand-in), oldest first.
    public func outbox() async throws -> [AdminAPI.OutboxMessage] {
        let reply = try await admin.call(AdminAPI.outbox)
        guard let outbox = reply.answer else { throw TestSupportError("the outbox answered \(reply.status)") }
        return outbox.messages
    }

    /// The newest code in the outbox, for `recipient` when given.
    public func outboxCode(to recipient: String? = nil) async throws -> String {
        let messages = try await outbox().filter { recipient == nil || $0.to == recipient }
        guard let code = messages.last?.code else { throw TestSupportError("no code in the outbox") }
        return code
    }

    /// The audit log's events so far (sealed first by the provider), oldest first: up to
    /// 1,000, enough for any one test.
    public func auditEvents() async throws -> [AuditEvent] {
        let reply = try await admin.call(AdminAPI.events, query: [(AdminAPI.EventQuery.limit, "1000")])
        guard let page = reply.answer else { throw TestSupportError("the audit log answered \(reply.status): \(String(decoding: reply.body, as: UTF8.self))") }
        return page.events
    }

    /// An OAuth client for the built-in CLI client.
    public func oauthClient(redirectURI: URL? = nil) throws -> OAuthClient {
        try OAuthClient(configuration: .init(issuer: issuer, clientID: ProviderConfiguration.cliClient.id, redirectURI: redirectURI ?? Self.callback))
    }

    public var host: String { issuer.host ?? "" }
    public var port: Int { issuer.port ?? 80 }
}
