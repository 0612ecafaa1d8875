import Foundation
import Synchronization
import VaporCSQLite

/// One open SQLite connection, called directly and synchronously
/// (docs/ARCHITECTURE.md, "The store's unit of work").
///
/// This folder is the only place that calls SQLite's C API: the library sqlite-nio builds
/// and ships (its `VaporCSQLite` module, symbols prefixed `sqlite_nio_`), so the provider
/// needs no system SQLite. sqlite-nio's own connection runs every statement on its thread
/// pool and answers on an event loop, two thread switches per statement; a transaction of
/// the provider is a handful of page-cache lookups that take microseconds, so the store
/// runs a whole transaction in one call here instead.
///
/// A handle has one user at a time (the writer's drainer, or a reader taken from the
/// pool), which is why it can keep prepared statements: each statement text is prepared
/// once per connection and reset after use. The statement texts are the provider's own
/// (``SQLStatement`` binds every value), and those whose shape varies at run time are not
/// kept, so the cache holds a bounded set; it is emptied past ``maximumCachedStatements``
/// all the same.
final class SQLiteHandle: @unchecked Sendable {
    // @unchecked: the pointer and the cache are touched only by the handle's one user at
    // a time (the writer's drainer or the reader that took it from the pool); the
    // library itself is built serialized (SQLITE_THREADSAFE=1) and opened FULLMUTEX.
    private var connection: OpaquePointer?
    private var statements: [String: SQLitePreparedStatement] = [:]
    /// Statements the provider ran on this connection; shared by all of a database's handles.
    private let counter: StoreStatistics

    static let maximumCachedStatements = 256

    /// How many compiled statements the cache holds (for the tests).
    var cachedStatements: Int { statements.count }

    /// Set while a read runs on the writer outside a transaction (the in-memory database's
    /// reads): a statement that would write is then refused, as a reader connection, opened
    /// read-only, refuses it for a database on disk.
    var onlyReads = false

    /// Opens `path` (":memory:" for a private in-memory database).
    ///
    /// `immutable` (read-only, for a database no process has open: no `-wal` beside it)
    /// opens it as SQLite's `immutable=1` URI parameter says: no locks, no `-wal` or `-shm`
    /// file made, so reading it leaves the directory exactly as it was.
    init(path: String, readOnly: Bool, immutable: Bool = false, counter: StoreStatistics) throws(StoreError) {
        self.counter = counter
        var opened: OpaquePointer?
        var flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW
        var name = path
        if immutable {
            flags |= SQLITE_OPEN_URI
            // RFC 8089 file URI: every byte but the unreserved ones and / percent-encoded.
            let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/")
            name = "file:" + (path.addingPercentEncoding(withAllowedCharacters: unreserved) ?? path) + "?immutable=1"
        }
        let result = sqlite_nio_sqlite3_open_v2(name, &opened, flags, nil)
        guard result == SQLITE_OK, let opened else {
            let message = opened.flatMap { sqlite_nio_sqlite3_errmsg($0) }.map { String(cString: $0) } ?? "code \(result)"
            if let opened { sqlite_nio_sqlite3_close_v2(opened) }
            throw StoreError.engineFailure("cannot open the SQLite database", underlying: SQLiteFailure(code: result, message: message))
        }
        connection = opened
        // Extended codes tell a full disk and a unique key apart from other failures.
        sqlite_nio_sqlite3_extended_result_codes(opened, 1)
    }

    deinit {
        close()
    }

    /// Closes the connection (statements first: a connection with unfinalized statements
    /// would linger); later statements fail with ``StoreError/Code-swift.struct/unavailable``.
    /// The last connection to a WAL database checkpoints it as it closes, which reads and
    /// syncs files: callers close on the store's own queue, never on a cooperative thread.
    func close() {
        statements.removeAll()
        if let connection { sqlite_nio_sqlite3_close_v2(connection) }
        connection = nil
    }

    private func open() throws(StoreError) -> OpaquePointer {
        guard let connection else { throw StoreError.unavailable("the SQLite database is closed") }
        return connection
    }

    /// Waits up to `milliseconds` for a lock another connection or process holds; 0
    /// answers SQLITE_BUSY at once.
    func setBusyTimeout(milliseconds: Int32) {
        guard let connection else { return }
        sqlite_nio_sqlite3_busy_timeout(connection, milliseconds)
    }

    /// Runs trusted text with no values and no rows: pragmas, BEGIN, COMMIT, savepoints.
    /// One statement is prepared once and kept like the provider's queries: a sign-in's
    /// transactions begin, commit and (in a group) set savepoints several times each, and
    /// `sqlite3_exec` would parse the text every time (docs/PERFORMANCE.md, "Less per
    /// request"). Text of several statements (a migration's) goes through `sqlite3_exec`.
    func execute(_ text: String) throws(StoreError) {
        let connection = try open()
        guard !text.utf8.contains(UInt8(ascii: ";")) else {
            let result = sqlite_nio_sqlite3_exec(connection, text, nil, nil, nil)
            guard result == SQLITE_OK else { throw failure(result) }
            return
        }
        let pointer = try prepare(text).pointer
        defer { sqlite_nio_sqlite3_reset(pointer) }
        while true {
            let step = sqlite_nio_sqlite3_step(pointer)
            if step == SQLITE_DONE { return }
            // A pragma answers with a row (journal_mode names the mode it set).
            guard step == SQLITE_ROW else { throw failure(step) }
        }
    }

    /// Runs one of the provider's statements and returns its rows.
    func query(_ statement: SQLStatement) throws(StoreError) -> [SQLRow] {
        _ = try open()
        counter.countStatement()
        let prepared = try prepare(statement.text, keeping: !statement.variesAtRunTime)
        let pointer = prepared.pointer
        guard !onlyReads || sqlite_nio_sqlite3_stmt_readonly(pointer) != 0 else {
            throw StoreError.engineFailure("a read ran a statement that writes")
        }
        // Reset, not cleared: every statement binds all of its values each time, and
        // clearing marks a statement whose plan looked at a bound value (an `= $n` the
        // index does not serve, a LIMIT) as expired, so SQLite would parse and plan it
        // again at its next step, which profiling found was a third of all SQLite time.
        // Through `prepared`, so that a statement not kept lives until it is reset.
        defer { sqlite_nio_sqlite3_reset(prepared.pointer) }
        for (offset, value) in statement.binds.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .null:
                result = sqlite_nio_sqlite3_bind_null(pointer, index)
            case .integer(let integer):
                result = sqlite_nio_sqlite3_bind_int64(pointer, index, integer)
            case .text(let text):
                var text = text
                result = text.withUTF8 { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { characters in
                        guard let base = characters.baseAddress else {
                            return sqlite_nio_sqlite3_bind_text64(pointer, index, "", 0, transient, UInt8(SQLITE_UTF8))
                        }
                        return sqlite_nio_sqlite3_bind_text64(pointer, index, base, UInt64(characters.count), transient, UInt8(SQLITE_UTF8))
                    }
                }
            case .blob(let data):
                result = data.withUnsafeBytes { bytes in
                    // A zero-length blob still needs a non-null pointer, or SQLite stores NULL.
                    sqlite_nio_sqlite3_bind_blob64(pointer, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), UInt64(bytes.count), transient)
                }
            }
            guard result == SQLITE_OK else { throw failure(result) }
        }
        var rows: [SQLRow] = []
        while true {
            let step = sqlite_nio_sqlite3_step(pointer)
            if step == SQLITE_DONE { return rows }
            guard step == SQLITE_ROW else { throw failure(step) }
            rows.append(try row(of: prepared))
        }
    }

    private func row(of prepared: SQLitePreparedStatement) throws(StoreError) -> SQLRow {
        let pointer = prepared.pointer
        var values: [SQLValue] = []
        values.reserveCapacity(prepared.columns.count)
        for index in 0..<Int32(prepared.columns.count) {
            switch sqlite_nio_sqlite3_column_type(pointer, index) {
            case SQLITE_NULL:
                values.append(.null)
            case SQLITE_INTEGER:
                values.append(.integer(sqlite_nio_sqlite3_column_int64(pointer, index)))
            case SQLITE_TEXT:
                let count = Int(sqlite_nio_sqlite3_column_bytes(pointer, index))
                if let text = sqlite_nio_sqlite3_column_text(pointer, index) {
                    values.append(.text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)))
                } else {
                    values.append(.text(""))
                }
            case SQLITE_BLOB:
                let count = Int(sqlite_nio_sqlite3_column_bytes(pointer, index))
                if let bytes = sqlite_nio_sqlite3_column_blob(pointer, index), count > 0 {
                    values.append(.blob(Data(bytes: bytes, count: count)))
                } else {
                    values.append(.blob(Data()))
                }
            default:
                // The schema has no REAL column: a float read back is a changed file.
                throw StoreError.corruptRow("column \(prepared.columns.names[Int(index)]) holds a floating-point number, which the store never writes")
            }
        }
        return SQLRow(columns: prepared.columns, values: values)
    }

    /// `text` compiled, from the cache when it was before. A statement whose text varies at
    /// run time (the audit sealer's `VALUES` and `IN` lists, one text per batch size) is
    /// compiled for this one use and not kept (`keeping` false): kept, its variants (up to
    /// 1,500 for batches of up to 500 rows) brought one connection's cache to 203 entries
    /// in a short benchmark run, and past 256 the cache empties and every hot statement is
    /// compiled again.
    private func prepare(_ text: String, keeping: Bool = true) throws(StoreError) -> SQLitePreparedStatement {
        if keeping, let cached = statements[text] { return cached }
        var pointer: OpaquePointer?
        let flags = keeping ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let result = sqlite_nio_sqlite3_prepare_v3(connection, text, -1, flags, &pointer, nil)
        guard result == SQLITE_OK, let pointer else { throw failure(result) }
        let count = sqlite_nio_sqlite3_column_count(pointer)
        let names = (0..<count).map { index in
            sqlite_nio_sqlite3_column_name(pointer, index).map { String(cString: $0) } ?? "column \(index)"
        }
        let prepared = SQLitePreparedStatement(pointer: pointer, columns: SQLColumns(names: names))
        guard keeping else { return prepared }
        if statements.count >= Self.maximumCachedStatements { statements.removeAll() }
        statements[text] = prepared
        return prepared
    }

    /// SQLite's failure `code` as a ``StoreError``, with SQLite's message (which names
    /// tables and columns, never a bound value) kept as the cause.
    private func failure(_ code: Int32) -> StoreError {
        let message = sqlite_nio_sqlite3_errmsg(connection).map { String(cString: $0) } ?? "code \(code)"
        return SQLiteFailure(code: sqlite_nio_sqlite3_extended_errcode(connection), message: message).storeError
    }
}

/// A compiled statement, finalized with its owner.
final class SQLitePreparedStatement {
    let pointer: OpaquePointer
    let columns: SQLColumns

    init(pointer: OpaquePointer, columns: SQLColumns) {
        self.pointer = pointer
        self.columns = columns
    }

    deinit {
        sqlite_nio_sqlite3_finalize(pointer)
    }
}

/// SQLite's error: its result code (extended) and message.
struct SQLiteFailure: Error, CustomStringConvertible {
    var code: Int32
    var message: String

    var description: String { "SQLite error \(code): \(message)" }

    var storeError: StoreError {
        switch code & 0xff {
        case SQLITE_FULL:
            return StoreError.diskFull("the disk holding the SQLite database is full; nothing of the failed write was kept", underlying: self)
        case SQLITE_CONSTRAINT:
            return StoreError.duplicate("a row with that key exists", underlying: self)
        case SQLITE_BUSY, SQLITE_LOCKED:
            return StoreError.unavailable("the SQLite database is locked by another process", underlying: self)
        case SQLITE_CORRUPT, SQLITE_NOTADB:
            return StoreError.engineFailure("the SQLite database file is damaged or not a database", underlying: self)
        case SQLITE_IOERR:
            return StoreError.engineFailure("reading or writing the SQLite database failed", underlying: self)
        case SQLITE_READONLY:
            return StoreError.engineFailure("a write reached a read-only SQLite connection", underlying: self)
        default:
            return StoreError.engineFailure("the SQLite database failed", underlying: self)
        }
    }
}

/// `SQLITE_TRANSIENT`: SQLite copies a bound value before the bind call returns.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
