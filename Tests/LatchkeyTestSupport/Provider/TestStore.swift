public import Foundation
import LatchkeyCrypto
public import LatchkeyIdP
import Logging
import PostgresNIO

/// The engines provider tests run against: SQLite in a private data directory always,
/// and PostgreSQL when `LATCHKEY_TEST_POSTGRES_URL` names a server (`.ci/run` starts one),
/// each test in a database of its own that is dropped afterwards.
public enum TestStore: String, CaseIterable, Sendable {
    case sqlite
    case postgres

    public static let postgresURL: String? = ProcessInfo.processInfo.environment["LATCHKEY_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }

    /// SQLite, and PostgreSQL when a server is configured (else the skip is said once;
    /// under CI the PostgreSQL runs stay, and fail for want of the server).
    public static let available: [TestStore] = {
        guard postgresURL != nil || TestEnvironment.isCI else {
            print("LATCHKEY_TEST_POSTGRES_URL is not set: provider tests run against SQLite only; PostgreSQL runs were skipped")
            return [.sqlite]
        }
        return [.sqlite, .postgres]
    }()

    /// A fresh store for one test, and what removes it.
    public func make() async throws -> (storage: ProviderConfiguration.Storage, storeKey: Data, cleanup: @Sendable () async -> Void) {
        let key = try SecureRandom.bytes(count: 32)
        switch self {
        case .sqlite:
            // The data directory is made by the store, inside a private temporary directory.
            let temporary = try TemporaryDirectory()
            return (.sqlite(directory: temporary.url.appendingPathComponent("data")), key, { _ = temporary })
        case .postgres:
            guard let url = Self.postgresURL else { throw TestSupportError("LATCHKEY_TEST_POSTGRES_URL is not set (.ci/run starts a server and sets it)") }
            let base = try PostgresLocation(url: url)
            let name = "latchkey_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
            try await Self.administer(base, "CREATE DATABASE \(name)")
            var location = base
            location.database = name
            return (.postgres(location), key, { try? await Self.administer(base, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)") })
        }
    }

    /// Runs `body` with a fresh store's storage and key, and removes the store after,
    /// whatever `body` did.
    public func with<Result: Sendable>(_ body: (ProviderConfiguration.Storage, Data) async throws -> Result) async throws -> Result {
        let store = try await make()
        let result: Swift.Result<Result, any Error>
        do {
            result = .success(try await body(store.storage, store.storeKey))
        } catch {
            result = .failure(error)
        }
        await store.cleanup()
        return try result.get()
    }

    /// Runs one statement on the server's maintenance database (names here are ours).
    public static func administer(_ location: PostgresLocation, _ sql: String) async throws {
        let configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.user, password: location.password,
            database: location.database, tls: .disable
        )
        let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: Logger(label: "test-postgres"))
        do {
            try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "test-postgres"))
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
    }
}
