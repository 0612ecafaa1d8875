import Foundation
import LatchkeyIdP
import Logging
import PostgresNIO

/// A fresh database on the benchmark's PostgreSQL server, dropped afterwards.
struct PostgresBenchDatabase {
    let server: PostgresLocation
    let name: String
    /// The database's URL, its password included.
    let url: String

    /// What `latchkey serve` is started with to use it: the URL in `LATCHKEY_DATABASE_URL`,
    /// since `--database` refuses a password (a command line is readable by every local user).
    var environment: [String: String] { ["LATCHKEY_DATABASE_URL": url] }

    static func create(_ serverURL: String) async throws -> PostgresBenchDatabase {
        let server = try PostgresLocation(url: serverURL)
        let name = "latchkey_bench_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await run(server, "CREATE DATABASE \(name)")
        var components = URLComponents(string: serverURL)
        components?.path = "/" + name
        return PostgresBenchDatabase(server: server, name: name, url: components?.string ?? serverURL)
    }

    func drop() async throws {
        try await Self.run(server, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    private static func run(_ location: PostgresLocation, _ sql: String) async throws {
        let connection = try await PostgresConnection.connect(
            configuration: .init(host: location.host, port: location.port, username: location.user, password: location.password, database: location.database, tls: .disable),
            id: 1, logger: Logger(label: "latchkey-bench")
        )
        defer { Task { try? await connection.close() } }
        try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "latchkey-bench"))
    }
}
