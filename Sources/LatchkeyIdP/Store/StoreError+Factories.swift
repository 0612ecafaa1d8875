// One factory per ``StoreError/Code``, as swift-certificates' `CertificateError` has: a call
// site names the kind of failure first and cannot pair a reason with the wrong code.
extension StoreError {
    /// The database cannot be reached or answered with a connection failure; the
    /// provider answers 503 and tries again on the next request.
    public static func unavailable(
        _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> StoreError {
        StoreError(.unavailable, reason, underlying: underlying, file: file, line: line)
    }

    /// The database's schema is newer than this build of Latchkey understands.
    public static func schemaTooNew(
        _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> StoreError {
        StoreError(.schemaTooNew, reason, underlying: underlying, file: file, line: line)
    }

    /// A data directory or database file is open to group or others.
    public static func unsafePermissions(
        _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> StoreError {
        StoreError(.unsafePermissions, reason, underlying: underlying, file: file, line: line)
    }

    /// A row holds a value of the wrong type or shape.
    public static func corruptRow(
        _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> StoreError {
        StoreError(.corruptRow, reason, underlying: underlying, file: file, line: line)
    }

    /// The disk (or the database's quota) is full: nothing of the failed write was kept.
    public static func diskFull(
        _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> StoreError {
        StoreError(.diskFull, reason, underlying: underlying, file: file, line: line)
    }

    /// A database URL or option that cannot be used.
    public static func invalidConfiguration(
        _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> StoreError {
        StoreError(.invalidConfiguration, reason, underlying: underlying, file: file, line: line)
    }

    /// A row with the same unique key exists.
    public static func duplicate(
        _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> StoreError {
        StoreError(.duplicate, reason, underlying: underlying, file: file, line: line)
    }

    /// Concurrent transactions conflicted more times than the store retries.
    public static func conflict(
        _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> StoreError {
        StoreError(.conflict, reason, underlying: underlying, file: file, line: line)
    }

    /// Any other failure of the engine.
    public static func engineFailure(
        _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> StoreError {
        StoreError(.engineFailure, reason, underlying: underlying, file: file, line: line)
    }

    /// A key that seals the store's secrets is missing, wrong or unreadable.
    public static func keyUnavailable(
        _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> StoreError {
        StoreError(.keyUnavailable, reason, underlying: underlying, file: file, line: line)
    }
}
