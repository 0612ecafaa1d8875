public import LatchkeyCrypto

/// An error from the provider's store (docs/ARCHITECTURE.md, "The store").
///
/// Shaped like swift-certificates' `CertificateError`: an open-ended ``code`` to match
/// on, a ``reason`` an operator can act on, the engine's own error kept as
/// ``underlying``, and where in Latchkey it arose. Reasons name tables, files and
/// columns, never a token, code or key.
public struct StoreError: LatchkeyErrorTemplate, Sendable {
    public var code: Code
    public var reason: String
    /// The engine's error (SQLite's, PostgreSQL's, the file system's), when there was one.
    public var underlying: (any Error)?
    public var file: String
    public var line: UInt

    public init(_ code: Code, _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.underlying = underlying
        self.file = file
        self.line = line
    }


    /// The kind of a ``StoreError``. Open-ended: switch statements need a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { name }

        /// The database cannot be reached or answered with a connection failure; the
        /// provider answers 503 and tries again on the next request.
        public static let unavailable = Code("unavailable")
        /// The database's schema is newer than this build of Latchkey understands.
        public static let schemaTooNew = Code("schemaTooNew")
        /// A data directory or database file is open to group or others.
        public static let unsafePermissions = Code("unsafePermissions")
        /// A row holds a value of the wrong type or shape.
        public static let corruptRow = Code("corruptRow")
        /// The disk (or the database's quota) is full: nothing of the failed write was kept.
        public static let diskFull = Code("diskFull")
        /// A database URL or option that cannot be used.
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// A row with the same unique key exists.
        public static let duplicate = Code("duplicate")
        /// Concurrent transactions conflicted more times than the store retries.
        public static let conflict = Code("conflict")
        /// Any other failure of the engine.
        public static let engineFailure = Code("engineFailure")
        /// A key that seals the store's secrets is missing, wrong or unreadable.
        public static let keyUnavailable = Code("keyUnavailable")
    }
}
