import Foundation

/// One SQL statement and its bound values, written once for both engines
/// (docs/ARCHITECTURE.md, "The store").
///
/// Values are only ever bound, never spliced into the text: interpolating `\(value)`
/// appends a placeholder `$n` and binds the value, so no identity, token hash or
/// username can change a statement's meaning. PostgreSQL reads `$n` as its own
/// positional parameters; SQLite reads them as named parameters numbered in order of
/// first appearance, which is the same order, since each placeholder appears once.
/// ``SQLStatement/raw(_:)`` splices trusted text (a table name in a migration) only.
struct SQLStatement: Sendable, ExpressibleByStringInterpolation {
    private(set) var text: String
    private(set) var binds: [SQLValue]

    init(stringLiteral value: String) {
        text = value
        binds = []
    }

    init(stringInterpolation: Interpolation) {
        text = stringInterpolation.text
        binds = stringInterpolation.binds
    }

    /// Appends another statement's text, its placeholders renumbered after this one's
    /// and its values bound: how a statement with a row count known only at run time
    /// (a `VALUES` list) is built without splicing a value into the text.
    mutating func append(_ other: SQLStatement) {
        var interpolation = Interpolation(literalCapacity: 0, interpolationCount: 0)
        swap(&interpolation.text, &text)
        swap(&interpolation.binds, &binds)
        interpolation.appendInterpolation(statement: other)
        swap(&interpolation.text, &text)
        swap(&interpolation.binds, &binds)
    }

    struct Interpolation: StringInterpolationProtocol {
        var text = ""
        var binds: [SQLValue] = []

        init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + interpolationCount * 3)
            binds.reserveCapacity(interpolationCount)
        }

        mutating func appendLiteral(_ literal: String) {
            text += literal
        }

        mutating func appendInterpolation(_ value: some SQLBindable) {
            binds.append(value.sqlValue)
            text += "$\(binds.count)"
        }

        mutating func appendInterpolation(_ value: (some SQLBindable)?) {
            binds.append(value?.sqlValue ?? .null)
            text += "$\(binds.count)"
        }

        /// Trusted text, written as it is (never a value from a request or a row).
        mutating func appendInterpolation(raw: String) {
            text += raw
        }

        /// Another statement as a part of this one (a step of a statement of CTEs): its
        /// text, with its placeholders renumbered after this one's, and its values bound.
        mutating func appendInterpolation(statement: SQLStatement) {
            let offset = binds.count
            var scalars = statement.text.unicodeScalars[...]
            while let scalar = scalars.popFirst() {
                text.unicodeScalars.append(scalar)
                guard scalar == "$" else { continue }
                let digits = scalars.prefix { ("0"..."9").contains($0) }
                guard let number = Int(String(String.UnicodeScalarView(digits))) else { continue }
                scalars = scalars.dropFirst(digits.count)
                text += String(number + offset)
            }
            binds += statement.binds
        }
    }
}

/// A value a statement binds.
protocol SQLBindable {
    var sqlValue: SQLValue { get }
}

extension String: SQLBindable {
    var sqlValue: SQLValue { .text(self) }
}

extension Data: SQLBindable {
    var sqlValue: SQLValue { .blob(self) }
}

extension Int: SQLBindable {
    var sqlValue: SQLValue { .integer(Int64(self)) }
}

extension Int64: SQLBindable {
    var sqlValue: SQLValue { .integer(self) }
}

extension UInt32: SQLBindable {
    var sqlValue: SQLValue { .integer(Int64(self)) }
}

/// Booleans are stored as 0 and 1 in both engines, so one statement serves both.
extension Bool: SQLBindable {
    var sqlValue: SQLValue { .integer(self ? 1 : 0) }
}

/// Times are stored as whole milliseconds since 1970 (a BIGINT in both engines):
/// comparable in SQL, exact, and free of time-zone rules.
extension Date: SQLBindable {
    var sqlValue: SQLValue { .integer(Int64((timeIntervalSince1970 * 1000).rounded(.down))) }
}
