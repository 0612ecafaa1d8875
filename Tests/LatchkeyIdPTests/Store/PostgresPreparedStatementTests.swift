import Foundation
@testable import LatchkeyIdP
import LatchkeyTestSupport
import Logging
import PostgresNIO
import Testing

/// The PostgreSQL store's statements, prepared once per connection, against a real server:
/// a text is parsed once and then executed by name, a value of another type or a NULL is
/// its own statement, a name a schema change or a failed preparation spoiled closes its
/// connection instead of failing every later request on it, and past the bound texts go
/// unnamed.
@Suite(
    "PostgreSQL prepared statements", .timeLimit(.minutes(3)),
    .requires(if: TestStore.postgresURL != nil, "LATCHKEY_TEST_POSTGRES_URL is not set")
)
struct PostgresPreparedStatementTests {
    static let logger = Logger(label: "prepared-statement-test")

    /// A database over a fresh PostgreSQL database with one connection, so every
    /// statement runs on the same one while it lives.
    static func withDatabase(
        statements: PostgresPreparedStatements = PostgresPreparedStatements(), _ body: (PostgresProviderDatabase) async throws -> Void
    ) async throws {
        try await TestStore.postgres.with { storage, _ in
            guard case .postgres(let location) = storage else { throw StoreError.invalidConfiguration("not PostgreSQL") }
            let database = PostgresProviderDatabase(
                configuration: try location.connectionConfiguration(), maximumConnections: 1, logger: logger, statements: statements
            )
            do {
                try await body(database)
            } catch {
                await database.close()
                throw error
            }
            await database.close()
        }
    }

    /// The statements prepared on the connection that runs this read, by their text.
    static func prepared(on database: PostgresProviderDatabase) async throws -> [String] {
        try await database.read { try await $0.query("SELECT statement FROM pg_prepared_statements ORDER BY statement") }
            .map { try $0.decode("statement", as: String.self) }
    }

    static func backend(_ database: PostgresProviderDatabase) async throws -> Int64 {
        try #require(try await database.read { try await $0.query("SELECT pg_backend_pid()::bigint AS pid") }.first).decode("pid")
    }

    @Test("a text run three times is prepared once on its connection, and answers each time with its own values")
    func preparedOnce() async throws {
        try await Self.withDatabase { database in
            for value in ["a", "b", "c"] {
                let rows = try await database.read { try await $0.query("SELECT \(value)::text || 'x' AS joined") }
                #expect(try rows.first?.decode("joined", as: String.self) == value + "x")
            }
            let texts = try await Self.prepared(on: database)
            #expect(texts.filter { $0.hasPrefix("SELECT $1::text || 'x'") }.count == 1, "\(texts)")
        }
    }

    @Test("the same text with a NULL, an integer, bytes or text in one place is a statement for each, and each reads its value back")
    func typesApart() async throws {
        try await Self.withDatabase { database in
            @Sendable func shown(_ statement: SQLStatement) async throws -> String {
                try #require(try await database.read { try await $0.query(statement) }.first).decode("shown")
            }
            let nothing: String? = nil
            #expect(try await shown("SELECT coalesce(\(nothing)::text, 'none') AS shown") == "none")
            #expect(try await shown("SELECT coalesce(\(Int64(41))::text, 'none') AS shown") == "41")
            #expect(try await shown("SELECT coalesce(\(Data([0, 255]))::text, 'none') AS shown") == "\\x00ff")
            #expect(try await shown("SELECT coalesce(\("t")::text, 'none') AS shown") == "t")
            let texts = try await Self.prepared(on: database)
            #expect(texts.filter { $0.hasPrefix("SELECT coalesce($1::text") }.count == 4, "\(texts)")
        }
    }

    @Test("a schema change under a prepared statement (another instance's migration) fails one request, closes that connection, and the next request prepares afresh")
    func schemaChanged() async throws {
        try await Self.withDatabase { database in
            _ = try await database.write("CREATE TABLE changing (a bigint)")
            _ = try await database.write("INSERT INTO changing (a) VALUES (\(Int64(1)))")
            let before = try await Self.backend(database)
            #expect(try await database.read { try await $0.query("SELECT * FROM changing") }.count == 1)
            _ = try await database.write("ALTER TABLE changing ADD COLUMN b text")
            // PostgreSQL refuses the cached plan whose result type changed (0A000).
            let refused = await StoreTests.code { _ = try await database.read { try await $0.query("SELECT * FROM changing") } }
            #expect(refused == .engineFailure)
            let rows = try await database.read { try await $0.query("SELECT * FROM changing") }
            #expect(rows.first?.columns.index(of: "b") != nil, "the new column is read")
            #expect(try await Self.backend(database) != before, "the spoiled connection was closed")
        }
    }

    @Test("a preparation PostgreSQL refuses (a table not there yet) does not stick to its connection: once the table exists, the same text runs")
    func refusedPreparation() async throws {
        try await Self.withDatabase { database in
            let refused = await StoreTests.code { _ = try await database.read { try await $0.query("SELECT a FROM later") } }
            #expect(refused == .engineFailure)
            _ = try await database.write("CREATE TABLE later (a bigint)")
            _ = try await database.write("INSERT INTO later (a) VALUES (\(Int64(7)))")
            let rows = try await database.read { try await $0.query("SELECT a FROM later") }
            #expect(try rows.first?.decode("a", as: Int64.self) == 7)
        }
    }

    @Test("an error while executing (a duplicate key) keeps the connection and its prepared statements")
    func executionErrorsKeep() async throws {
        try await Self.withDatabase { database in
            _ = try await database.write("CREATE TABLE unique_keys (a bigint PRIMARY KEY)")
            _ = try await database.write("INSERT INTO unique_keys (a) VALUES (\(Int64(1)))")
            let before = try await Self.backend(database)
            let duplicate = await StoreTests.code { _ = try await database.write("INSERT INTO unique_keys (a) VALUES (\(Int64(1)))") }
            #expect(duplicate == .duplicate)
            #expect(try await Self.backend(database) == before)
        }
    }

    @Test("a value PostgreSQL refuses as bad data (a NUL in text, which a stranger can send in any field) fails that request and keeps the connection: no reconnect per hostile request")
    func badDataKeeps() async throws {
        try await Self.withDatabase { database in
            _ = try await database.write("CREATE TABLE names (a text)")
            let before = try await Self.backend(database)
            let refused = await StoreTests.code { _ = try await database.write("INSERT INTO names (a) VALUES (\("ada\u{0}"))") }
            #expect(refused == .engineFailure)
            #expect(try await Self.backend(database) == before)
        }
    }

    @Test("a statement whose shape is made at run time (a VALUES list, as the audit sealer's) or with more values than the limit goes unnamed, and answers")
    func batchesUnnamed() async throws {
        try await Self.withDatabase { database in
            for count in [1, 2, 3] {
                var list: SQLStatement = "SELECT count(*) AS n FROM (VALUES "
                for index in 0..<count {
                    list.append("\(raw: index == 0 ? "" : ", ")(\(Int64(index)))")
                }
                list.append(") AS v (a)")
                #expect(list.variesAtRunTime)
                let built = list
                let rows = try await database.read { try await $0.query(built) }
                #expect(try rows.first?.decode("n", as: Int64.self) == Int64(count))
            }
            // Composed from one that varies: varies too.
            var varying: SQLStatement = "SELECT 1 AS one"
            varying.append("")
            let composed: SQLStatement = "WITH step AS (\(statement: varying)) SELECT one FROM step"
            #expect(composed.variesAtRunTime)
            let limit = PostgresPreparedStatements.maximumParameters
            #expect(database.statements.name(for: "SELECT 'wide' AS w", types: Array(repeating: .int8, count: limit)) != nil)
            #expect(database.statements.name(for: "SELECT 'wider' AS w", types: Array(repeating: .int8, count: limit + 1)) == nil)
            let texts = try await Self.prepared(on: database)
            #expect(!texts.contains { $0.contains("VALUES") }, "\(texts)")
        }
    }

    @Test("past the bound, texts go unnamed and still answer; the named ones stay prepared")
    func bounded() async throws {
        try await Self.withDatabase(statements: PostgresPreparedStatements(maximumNames: 4)) { database in
            for index in 0..<12 {
                let rows = try await database.read { try await $0.query("SELECT \(raw: String(index)) + \(Int64(index)) AS sum") }
                #expect(try rows.first?.decode("sum", as: Int64.self) == Int64(2 * index))
            }
            // Named: the first four texts seen; the catalogue's read, the fifth, goes unnamed.
            let texts = try await Self.prepared(on: database)
            #expect(texts.count == 4, "\(texts)")
            #expect(database.statements.name(for: "SELECT 11 + \(Int64(11)) AS sum", types: [.int8]) == nil)
        }
    }
}
