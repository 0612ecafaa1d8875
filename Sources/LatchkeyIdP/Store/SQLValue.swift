import Foundation

/// A value in a statement or a row: the four types the store uses, in both engines.
enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case text(String)
    case blob(Data)
}

/// One row of a result, read by column position (statements name their columns, so
/// positions are fixed). Rows come from a database, which the provider treats as input
/// from outside: a value of the wrong type is a ``StoreError`` naming the column, never
/// a crash.
struct SQLRow: Sendable {
    let values: [SQLValue]

    private func value(_ index: Int) throws(StoreError) -> SQLValue {
        guard values.indices.contains(index) else {
            throw StoreError.corruptRow("a row has \(values.count) columns; column \(index) was asked for")
        }
        return values[index]
    }

    private func mismatch(_ index: Int, _ expected: String) -> StoreError {
        StoreError.corruptRow("column \(index) of a row is not \(expected)")
    }

    func int(_ index: Int) throws(StoreError) -> Int64 {
        guard case .integer(let value) = try value(index) else { throw mismatch(index, "an integer") }
        return value
    }

    func optionalInt(_ index: Int) throws(StoreError) -> Int64? {
        switch try value(index) {
        case .null: return nil
        case .integer(let value): return value
        default: throw mismatch(index, "an integer or null")
        }
    }

    func bool(_ index: Int) throws(StoreError) -> Bool {
        try int(index) != 0
    }

    func text(_ index: Int) throws(StoreError) -> String {
        guard case .text(let value) = try value(index) else { throw mismatch(index, "text") }
        return value
    }

    func optionalText(_ index: Int) throws(StoreError) -> String? {
        switch try value(index) {
        case .null: return nil
        case .text(let value): return value
        default: throw mismatch(index, "text or null")
        }
    }

    func blob(_ index: Int) throws(StoreError) -> Data {
        guard case .blob(let value) = try value(index) else { throw mismatch(index, "bytes") }
        return value
    }

    func optionalBlob(_ index: Int) throws(StoreError) -> Data? {
        switch try value(index) {
        case .null: return nil
        case .blob(let value): return value
        default: throw mismatch(index, "bytes or null")
        }
    }

    func date(_ index: Int) throws(StoreError) -> Date {
        Date(timeIntervalSince1970: Double(try int(index)) / 1000)
    }

    func optionalDate(_ index: Int) throws(StoreError) -> Date? {
        try optionalInt(index).map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }
}
