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
    /// Whether the text's shape depends on data known only at run time: it was built with
    /// ``append(_:)`` (a `VALUES` list of as many rows as there are), or has such a
    /// statement as a part. Its variants are many, so PostgreSQL does not keep it prepared
    /// by name (``PostgresPreparedStatements``).
    private(set) var variesAtRunTime = false

    init(stringLiteral value: String) {
        text = value
        binds = []
    }

    init(stringInterpolation: Interpolation) {
        text = stringInterpolation.text
        binds = stringInterpolation.binds
        variesAtRunTime = stringInterpolation.variesAtRunTime
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
        variesAtRunTime = true
    }

    struct Interpolation: StringInterpolationProtocol {
        var text = ""
        var binds: [SQLValue] = []
        var variesAtRunTime = false

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
        ///
        /// The text is walked as UTF-8 bytes and copied a run at a time: `$` and the
        /// digits are ASCII, which never occurs inside a longer UTF-8 sequence. (It was
        /// walked one Unicode scalar at a time and appended scalar by scalar, 3% of a
        /// PostgreSQL sign-in, whose writes are statements of composed steps.) A `$`
        /// without digits, or with more digits than a number holds, is copied as it is.
        mutating func appendInterpolation(statement: SQLStatement) {
            variesAtRunTime = variesAtRunTime || statement.variesAtRunTime
            let offset = binds.count
            let source = Array(statement.text.utf8)
            var output: [UInt8] = []
            output.reserveCapacity(source.count + 16)
            var index = 0
            var runStart = 0
            while index < source.count {
                guard source[index] == UInt8(ascii: "$") else {
                    index += 1
                    continue
                }
                var end = index + 1
                var number = 0
                var fits = true
                while end < source.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(source[end]) {
                    let (times, overflow) = number.multipliedReportingOverflow(by: 10)
                    let (sum, overflowAgain) = times.addingReportingOverflow(Int(source[end] - UInt8(ascii: "0")))
                    fits = fits && !overflow && !overflowAgain
                    number = sum
                    end += 1
                }
                guard end > index + 1, fits, number <= Int.max - offset else {
                    index += 1
                    continue
                }
                output.append(contentsOf: source[runStart...index])
                output.append(contentsOf: String(number + offset).utf8)
                index = end
                runStart = end
            }
            output.append(contentsOf: source[runStart...])
            text += String(decoding: output, as: UTF8.self)
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
