import Logging
import NIOCore
import PostgresNIO

extension PostgresConnection {
    /// Runs `send`, which sends one statement on this connection, from the connection's
    /// own event loop and only while its channel is open; a closed connection is refused
    /// with ``StoreError/Code-swift.struct/unavailable`` instead.
    ///
    /// postgres-nio hands a statement to its channel with `channel.write(_:promise: nil)`
    /// and waits on a promise only its channel handler completes. Once a closed channel has
    /// removed its handlers (a tick after it closed), such a write fails with nobody to hear
    /// it, and the statement waits forever, ignoring cancellation. The store's connections
    /// are closed under an operation whenever a deadline abandons it (``Heartbeat``), and
    /// its `ROLLBACK` after a failed statement, or a test's statement after the close, then
    /// hung, holding its place in the pool for good: one fresh-clone CI run waited on it
    /// until killed.
    ///
    /// On the connection's event loop, nothing runs between the check and the write (the
    /// statement's call does not suspend before it writes), so a statement sent is one the
    /// handler sees, and fails or answers. Off that loop (a connection borrowed from
    /// another loop's shelf, ``PostgresConnectionPool``), `send` runs with the loop as its
    /// task's preferred executor.
    @discardableResult
    func sendWhileOpen<Result>(_ send: () async throws -> Result) async throws -> Result {
        if eventLoop.inEventLoop {
            guard !isClosed else { throw Self.closedBeforeSending }
            return try await send()
        }
        return try await withTaskExecutorPreference(EventLoopTaskExecutor(eventLoop)) {
            guard !isClosed else { throw Self.closedBeforeSending }
            return try await send()
        }
    }

    /// `query` sent with ``sendWhileOpen(_:)``.
    @discardableResult
    func queryWhileOpen(_ query: PostgresQuery, logger: Logger) async throws -> PostgresRowSequence {
        try await sendWhileOpen { try await self.query(query, logger: logger) }
    }

    private static var closedBeforeSending: StoreError {
        StoreError.unavailable("the PostgreSQL connection closed before the statement was sent")
    }
}
