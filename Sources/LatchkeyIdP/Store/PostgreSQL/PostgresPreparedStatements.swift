import PostgresNIO
import Synchronization

/// Names for the store's statement texts, so each is prepared once per connection and
/// then executed by name (issue 55, step 2; docs/ARCHITECTURE.md, "The store's unit of
/// work").
///
/// An unnamed statement is parsed, analysed and planned by PostgreSQL on every execution;
/// a named one is parsed once per connection, and its plan is kept (PostgreSQL's plan
/// cache: custom plans for the first five executions, then a generic one when it costs
/// no more). postgres-nio prepares a name on a connection the first time it is used there
/// and keeps the row description, so later executions send only Bind, Execute and Sync.
///
/// The store's texts are its own, and few; a name is given to the first
/// ``maximumNames`` distinct (text, parameter types) pairs a database (its pool of
/// connections) meets, after which a text goes unnamed as before. So nothing an outsider
/// sends can make either side keep an unbounded number of statements. A text whose shape
/// is made at run time (``SQLStatement/variesAtRunTime``: the audit sealer's `VALUES`
/// lists, one text per batch size up to 500 rows) or that binds more than
/// ``maximumParameters`` values always goes unnamed: its variants would take the names
/// the sign-in's statements need, and every connection would keep their plans.
final class PostgresPreparedStatements: Sendable {
    /// Distinct statements named at most, per database (and so per connection).
    let maximumNames: Int
    /// Values a named statement binds at most (the store's fixed statements bind a few
    /// dozen; a longer list is a batch).
    static let maximumParameters = 128

    private struct Key: Hashable {
        let text: String
        let types: [PostgresDataType]
    }

    private let names = Mutex<[Key: String]>([:])

    init(maximumNames: Int = 512) {
        self.maximumNames = maximumNames
    }

    /// The name `statement` with parameters of `types` is prepared under; nil when it is
    /// not to be kept (made at run time, too many values) or as many statements have been
    /// named as may be.
    func name(for statement: SQLStatement, types: [PostgresDataType]) -> String? {
        guard !statement.variesAtRunTime, types.count <= Self.maximumParameters else { return nil }
        let key = Key(text: statement.text, types: types)
        return names.withLock { names in
            if let name = names[key] { return name }
            guard names.count < maximumNames else { return nil }
            let name = "latchkey_\(names.count + 1)"
            names[key] = name
            return name
        }
    }

    /// Whether a server error on a named statement may have left the name unusable on
    /// its connection, which should then not be lent again.
    ///
    /// postgres-nio remembers a failed preparation and fails every later use of that name
    /// on the connection with the same error; a plan the schema has since changed under
    /// (SQLSTATE 0A000, "cached plan must not change result type") fails each execution.
    /// Errors a statement meets while executing (a duplicate key, class 23; a
    /// serialization conflict, class 40; bad data, class 22; a raised exception, P0) leave
    /// the prepared statement as it was, and the connection stays.
    static func mayHaveSpoiled(_ error: PSQLError) -> Bool {
        guard error.code == .server else { return false }
        guard let state = error.serverInfo?[.sqlState] else { return true }
        return !["23", "40", "22", "P0"].contains(state.prefix(2))
    }
}

/// A statement text that is only known at run time, executed through postgres-nio's
/// prepared-statement path, whose requirements are static: they are read from
/// ``current``, set around the one call that reads them
/// (`PostgresConnection.execute(_:logger:)`, which reads them before its first
/// suspension and again only in its error path, still within the task-local's scope).
struct PostgresTextStatement: PostgresPreparedStatement {
    struct Named: Sendable {
        let name: String
        let sql: String
        let types: [PostgresDataType]
    }

    @TaskLocal static var current: Named?

    static var name: String { named.name }
    static var sql: String { named.sql }
    static var bindingDataTypes: [PostgresDataType] { named.types }

    private static var named: Named {
        guard let current else { preconditionFailure("PostgresTextStatement is executed only within PostgresTextStatement.$current") }
        return current
    }

    let bindings: PostgresBindings

    func makeBindings() throws -> PostgresBindings { bindings }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}
