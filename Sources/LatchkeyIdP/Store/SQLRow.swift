import Foundation

/// One row of a result, read by column name and type: `try row.decode("username")`
/// where the type is known from the context, `row.decode("username", as: String.self)`
/// where it is not. Statements name their columns (`AS` for expressions), so a row never
/// depends on the order of a `SELECT` list.
///
/// Rows come from a database, which the provider treats as input from outside: a missing
/// column or a value of the wrong type is a ``StoreError`` naming the column and the type
/// it should have had, never a crash.
struct SQLRow: Sendable {
    let columns: SQLColumns
    let values: [SQLValue]

    func decode<Value: SQLDecodable>(_ column: String, as type: Value.Type = Value.self) throws(StoreError) -> Value {
        guard let index = columns.index(of: column), values.indices.contains(index) else {
            throw StoreError.corruptRow("a row has no column \(column)")
        }
        let value = values[index]
        guard let decoded = Value(sqlValue: value) else {
            throw StoreError.corruptRow("column \(column) holds \(value.kind), not \(Value.sqlTypeDescription)")
        }
        return decoded
    }
}

/// The column names of a result, shared by all its rows.
final class SQLColumns: Sendable {
    let names: [String]

    init(names: [String]) {
        self.names = names
    }

    var count: Int { names.count }

    /// Results have a dozen columns at most, so a scan beats hashing the name.
    func index(of name: String) -> Int? {
        names.firstIndex(of: name)
    }
}

/// A type a column can be read as.
protocol SQLDecodable {
    /// Nil when `sqlValue` is not this type's.
    init?(sqlValue: SQLValue)
    /// The type as an error names it ("an integer", "text or null").
    static var sqlTypeDescription: String { get }
}

extension Int64: SQLDecodable {
    init?(sqlValue: SQLValue) {
        guard case .integer(let value) = sqlValue else { return nil }
        self = value
    }

    static var sqlTypeDescription: String { "an integer" }
}

extension Int: SQLDecodable {
    init?(sqlValue: SQLValue) {
        guard case .integer(let value) = sqlValue, let int = Int(exactly: value) else { return nil }
        self = int
    }

    static var sqlTypeDescription: String { "an integer" }
}

extension UInt32: SQLDecodable {
    init?(sqlValue: SQLValue) {
        guard case .integer(let value) = sqlValue, let int = UInt32(exactly: value) else { return nil }
        self = int
    }

    static var sqlTypeDescription: String { "an integer from 0 to 2^32-1" }
}

/// Booleans are stored as 0 and 1 in both engines.
extension Bool: SQLDecodable {
    init?(sqlValue: SQLValue) {
        guard case .integer(let value) = sqlValue else { return nil }
        self = value != 0
    }

    static var sqlTypeDescription: String { "an integer (a boolean)" }
}

extension String: SQLDecodable {
    init?(sqlValue: SQLValue) {
        guard case .text(let value) = sqlValue else { return nil }
        self = value
    }

    static var sqlTypeDescription: String { "text" }
}

extension Data: SQLDecodable {
    init?(sqlValue: SQLValue) {
        guard case .blob(let value) = sqlValue else { return nil }
        self = value
    }

    static var sqlTypeDescription: String { "bytes" }
}

/// Times are whole milliseconds since 1970 (``SQLBindable``).
extension Date: SQLDecodable {
    init?(sqlValue: SQLValue) {
        guard case .integer(let value) = sqlValue else { return nil }
        self = Date(timeIntervalSince1970: Double(value) / 1000)
    }

    static var sqlTypeDescription: String { "an integer (milliseconds since 1970)" }
}

extension Optional: SQLDecodable where Wrapped: SQLDecodable {
    init?(sqlValue: SQLValue) {
        if case .null = sqlValue {
            self = .none
        } else if let value = Wrapped(sqlValue: sqlValue) {
            self = .some(value)
        } else {
            return nil
        }
    }

    static var sqlTypeDescription: String { "\(Wrapped.sqlTypeDescription) or null" }
}
