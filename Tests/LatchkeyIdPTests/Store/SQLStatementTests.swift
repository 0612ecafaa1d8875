import Foundation
@testable import LatchkeyIdP
import Testing

/// Statements composed of steps keep one numbering: each placeholder names its own value,
/// whatever the steps' texts hold around their placeholders.
@Suite("SQL statements composed of steps")
struct SQLStatementTests {
    @Test("a step's placeholders are renumbered after the statement's, and its values bound in order")
    func renumbered() {
        let step: SQLStatement = "UPDATE codes SET used = \(true) WHERE hash = \("é-hash") AND expires > \(42)"
        let statement: SQLStatement = "WITH first AS (SELECT \("a") AS x), second AS (\(statement: step)) SELECT \("b")"
        #expect(statement.text == "WITH first AS (SELECT $1 AS x), second AS (UPDATE codes SET used = $2 WHERE hash = $3 AND expires > $4) SELECT $5")
        #expect(statement.binds == [.text("a"), .integer(1), .text("é-hash"), .integer(42), .text("b")])
    }

    @Test("a $ without digits, one in a literal, non-ASCII text and a number too long for an Int are copied as they are")
    func copiedAsIs() {
        let long = String(repeating: "9", count: 40)
        let step = SQLStatement(stringLiteral: "SELECT '$', 'ünïcødé $x', $\(long), '€$'")
        let statement: SQLStatement = "SELECT \(1); \(statement: step)"
        #expect(statement.text == "SELECT $1; SELECT '$', 'ünïcødé $x', $\(long), '€$'")
        let trailing: SQLStatement = "\(2)\(statement: SQLStatement(stringLiteral: "x $"))"
        #expect(trailing.text == "$1x $")
    }

    @Test("random compositions: every placeholder, in order of the text, names the next value")
    func randomCompositions() {
        var generator = SystemRandomNumberGenerator()
        let fillers = ["", " ", "é", "$", "'$'", "€", "a$b", "$$", "\n", "𝄞"]
        for _ in 0..<500 {
            var statement: SQLStatement = "SELECT \(0)"
            var expected: [SQLValue] = [.integer(0)]
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                var step = SQLStatement(stringLiteral: fillers.randomElement(using: &generator)!)
                for _ in 0..<Int.random(in: 0...4, using: &generator) {
                    let value = Int64.random(in: 0...1_000_000, using: &generator)
                    step.append("\(value)" as SQLStatement)
                    step.append(SQLStatement(stringLiteral: fillers.randomElement(using: &generator)!))
                    expected.append(.integer(value))
                }
                statement = "\(statement: statement) \(statement: step)"
            }
            #expect(statement.binds == expected)
            // The numbered placeholders, read back from the text, are 1, 2, 3, … in order.
            let bytes = Array(statement.text.utf8)
            var numbers: [Int] = []
            var index = 0
            while index < bytes.count {
                defer { index += 1 }
                guard bytes[index] == UInt8(ascii: "$") else { continue }
                var end = index + 1
                while end < bytes.count, (48...57).contains(bytes[end]) { end += 1 }
                if end > index + 1 { numbers.append(Int(String(decoding: bytes[(index + 1)..<end], as: UTF8.self))!) }
            }
            #expect(numbers == Array(1...expected.count), "\(statement.text)")
        }
    }
}

/// The SQLite connection's cache of compiled statements holds the provider's fixed texts
/// only: a statement whose shape varies at run time (the audit sealer's `VALUES` and `IN`
/// lists) is compiled for its one use, so its variants never push the hot statements out.
@Suite("SQLite's cache of compiled statements")
struct SQLiteStatementCacheTests {
    @Test("300 lists of as many lengths run right and leave only the fixed statements in the cache")
    func variantsNotKept() throws {
        let handle = try SQLiteHandle(path: ":memory:", readOnly: false, counter: StoreStatistics())
        try handle.execute("CREATE TABLE numbers (n BIGINT NOT NULL)")
        let fixed: SQLStatement = "SELECT count(*) AS total FROM numbers WHERE n >= \(0)"
        for length in 1...300 {
            var insert: SQLStatement = "INSERT INTO numbers (n) VALUES (\(Int64(0)))"
            for value in 1..<length { insert.append(", (\(Int64(value)))" as SQLStatement) }
            #expect(insert.variesAtRunTime == (length > 1))
            _ = try handle.query(insert)
            _ = try handle.query(fixed)
        }
        let total = try handle.query(fixed).first?.decode("total", as: Int64.self)
        #expect(total == Int64(300 * 301 / 2), "every row of every list was written")
        // Kept: the CREATE, the one-row insert (a fixed text) and the count.
        #expect(handle.cachedStatements == 3, "only the fixed statements are kept, not \(handle.cachedStatements)")
    }
}
