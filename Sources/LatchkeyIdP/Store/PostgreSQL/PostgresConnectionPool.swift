import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// The PostgreSQL store's connections, each leased on the event loop it lives on
/// (docs/ARCHITECTURE.md, "The store's unit of work"; docs/PERFORMANCE.md, "Persisted provider").
///
/// postgres-nio's own pool (`PostgresClient`) places a connection on any event loop and
/// schedules, then cancels, a keep-alive timer and an idle timer (each a task sleeping on
/// the cooperative pool) every time a connection is leased and given back. A request
/// served on one event loop then waited for answers arriving on another, and paid the
/// timers' tasks on every statement. Here a connection is opened on the event loop of
/// the request that first needs it and given back to that loop's shelf, so a request
/// finds one where it runs: its statements are written and answered without a thread
/// switch. Idle connections are looked after by one repeating timer per pool, not per
/// lease.
///
/// The pool holds at most `maximumConnections` in all. A request that finds none idle on
/// its loop opens one while the pool is below that; at it, it borrows one idle on another
/// loop, or waits, first come first served, for the next one given back. A connection that
/// has gone quiet for half a minute is asked `SELECT 1` (a firewall that forgot it would
/// otherwise hang the next request until its deadline), and one that stays idle for a
/// minute is closed unless it is the last on its loop (``Upkeep``).
final class PostgresConnectionPool: Sendable {
    /// When idle connections are looked at, pinged and closed.
    struct Upkeep: Sendable {
        /// How long a connection may sit idle before it is pinged.
        var keepAliveInterval = TimeAmount.seconds(30)
        /// How long an idle connection (not the last of its loop) is kept.
        var idleTimeout = TimeAmount.seconds(60)
        /// How often idle connections are looked at.
        var sweepInterval = TimeAmount.seconds(15)
        /// How long a ping may go unanswered before its connection is closed.
        var pingDeadline = TimeAmount.seconds(10)
    }

    /// Connections per provider instance unless a caller says otherwise: as many as
    /// postgres-nio's pool was given before.
    static let defaultMaximumConnections = 16

    private static var closing: StoreError { StoreError.unavailable("the PostgreSQL store is closing") }

    private let configuration: PostgresConnection.Configuration
    private let maximumConnections: Int
    private let logger: Logger
    private let upkeep: Upkeep
    private let nextID = Atomic<Int>(1)
    private let state = Mutex(State())
    /// The idle connections' look-after timer, cancelled by ``close()``.
    private let sweep = Mutex<RepeatedTask?>(nil)

    private struct Idle {
        var connection: PostgresConnection
        /// When a lease gave it back: what the idle timeout counts from.
        var since: NIODeadline
        /// When it last answered, a lease or a ping: what the keep-alive counts from.
        var answered: NIODeadline
    }

    private struct State {
        /// Idle connections by the event loop they live on, the most recently given back last.
        var shelves: [ObjectIdentifier: [Idle]] = [:]
        /// Connections open or being opened, leased or idle.
        var open = 0
        /// Of those, the ones being opened.
        var opening = 0
        /// Leases waiting for a connection, oldest first.
        var waiters: [(id: Int, continuation: CheckedContinuation<Grant, any Error>)] = []
        var closed = false
    }

    /// What a waiting lease is given: a connection, or the right to open one.
    private enum Grant {
        case connection(PostgresConnection)
        case open
    }

    init(configuration: PostgresConnection.Configuration, maximumConnections: Int, logger: Logger, upkeep: Upkeep = Upkeep()) {
        self.configuration = configuration
        self.maximumConnections = max(1, maximumConnections)
        self.logger = logger
        self.upkeep = upkeep
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let task = loop.scheduleRepeatedTask(initialDelay: upkeep.sweepInterval, delay: upkeep.sweepInterval) { [weak self] _ in
            self?.lookAfterIdleConnections()
        }
        sweep.withLock { $0 = task }
    }

    deinit {
        sweep.withLock { $0?.cancel() }
    }

    /// Runs `body` with a connection on `eventLoop` if one is idle or can be opened there,
    /// and gives it back afterwards: closed instead, when `body` left it unusable or
    /// `abandoned` (asked once `body` has ended) says not to lend it again (a deadline
    /// gave up on it, or a named statement failed on it: ``Heartbeat/letGo()``).
    func withConnection<Result>(
        on eventLoop: any EventLoop, abandoned: () -> Bool = { false }, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let connection = try await lease(on: eventLoop)
        let outcome: Swift.Result<Result, any Error>
        do {
            outcome = .success(try await body(connection))
        } catch {
            outcome = .failure(error)
        }
        // A connection that failed (not a statement PostgreSQL refused) or was abandoned
        // may still look open while it closes, and is not lent again.
        let failed = if case .failure(let error as PSQLError) = outcome { error.code != .server } else { false }
        if abandoned() || failed {
            retire(connection)
        } else {
            giveBack(connection)
        }
        return try outcome.get()
    }

    /// How many connections are open or being opened (for tests and diagnostics).
    var openConnections: Int { state.withLock { $0.open } }

    /// How many connections sit idle on each event loop (for tests and diagnostics).
    var idleConnections: [Int] { state.withLock { $0.shelves.values.map(\.count).filter { $0 > 0 } } }

    private func lease(on eventLoop: any EventLoop) async throws -> PostgresConnection {
        let key = ObjectIdentifier(eventLoop)
        var stale: [PostgresConnection] = []
        let immediate = try state.withLock { state -> Grant? in
            guard !state.closed else { throw Self.closing }
            return grantNow(to: key, in: &state, dropping: &stale)
        }
        for connection in stale { connection.closeSoon() }
        let grant: Grant
        if let immediate {
            grant = immediate
        } else {
            grant = try await waitForTurn(on: key)
        }
        switch grant {
        case .connection(let connection): return connection
        case .open: return try await open(on: eventLoop)
        }
    }

    /// What a lease on `key`'s loop can have at once: an idle connection of that loop;
    /// below the maximum, a new one there; at it, an idle one of another loop (closed
    /// ones found on the way free their slots). Nil when it must wait.
    private func grantNow(to key: ObjectIdentifier, in state: inout State, dropping stale: inout [PostgresConnection]) -> Grant? {
        if let idle = Self.takeIdle(from: key, in: &state, dropping: &stale) { return .connection(idle) }
        if let slot = reserveSlot(in: &state) { return slot }
        for other in state.shelves.keys where other != key {
            if let idle = Self.takeIdle(from: other, in: &state, dropping: &stale) { return .connection(idle) }
        }
        // A closed connection found on another shelf may have freed a slot.
        return reserveSlot(in: &state)
    }

    /// The right to open a connection, counted at once, while the pool is below its maximum.
    private func reserveSlot(in state: inout State) -> Grant? {
        guard state.open < maximumConnections else { return nil }
        state.open += 1
        state.opening += 1
        return .open
    }

    /// Waits, first come first served, for a connection given back or a slot freed. The
    /// pool is looked at again under the lock that queues the waiter, so one given back
    /// between the first look and the queueing is not missed.
    private func waitForTurn(on key: ObjectIdentifier) async throws -> Grant {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Grant, any Error>) in
                var stale: [PostgresConnection] = []
                let outcome: Result<Grant, any Error>? = state.withLock { state in
                    if state.closed { return .failure(Self.closing) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if let grant = grantNow(to: key, in: &state, dropping: &stale) { return .success(grant) }
                    state.waiters.append((id, continuation))
                    return nil
                }
                for connection in stale { connection.closeSoon() }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Grant, any Error>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// An idle, still open connection from `key`'s shelf; closed ones found on the way are
    /// counted out and handed back in `stale` to be closed outside the lock.
    private static func takeIdle(from key: ObjectIdentifier, in state: inout State, dropping stale: inout [PostgresConnection]) -> PostgresConnection? {
        while let idle = state.shelves[key]?.popLast() {
            if !idle.connection.isClosed { return idle.connection }
            state.open -= 1
            stale.append(idle.connection)
        }
        return nil
    }

    /// Opens a connection on `eventLoop` in a slot already counted in `open`; the slot is
    /// given up (and passed to a waiter) when the connection cannot be made.
    private func open(on eventLoop: any EventLoop) async throws -> PostgresConnection {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        do {
            let connection = try await PostgresConnection.connect(on: eventLoop, configuration: configuration, id: id, logger: logger)
            state.withLock { $0.opening -= 1 }
            return connection
        } catch {
            // A lease cancelled while connecting says nothing about PostgreSQL: the
            // waiters are not told to give up on its account.
            slotFreed(failure: error is CancellationError ? nil : error, wasOpening: true)
            throw error
        }
    }

    /// A slot in `open` was given up (`wasOpening`: by a connection that could not be
    /// made): a waiter, if any, may open a connection in it. When a connection could not be
    /// made and the pool has none connected (PostgreSQL unreachable: the others are being
    /// opened, if any), every waiter is told so at once, rather than each trying in turn,
    /// one connect timeout after another, past its deadline.
    private func slotFreed(failure: (any Error)?, wasOpening: Bool = false) {
        let (grantee, refused) = state.withLock { state -> (CheckedContinuation<Grant, any Error>?, [CheckedContinuation<Grant, any Error>]) in
            state.open -= 1
            if wasOpening { state.opening -= 1 }
            guard !state.closed, !state.waiters.isEmpty else { return (nil, []) }
            if failure != nil, state.open == state.opening {
                defer { state.waiters.removeAll() }
                return (nil, state.waiters.map(\.continuation))
            }
            state.open += 1
            state.opening += 1
            return (state.waiters.removeFirst().continuation, [])
        }
        grantee?.resume(returning: .open)
        if let failure {
            for waiter in refused { waiter.resume(throwing: failure) }
        }
    }

    /// Closes a connection that is not to be lent again and frees its slot.
    private func retire(_ connection: PostgresConnection) {
        connection.closeSoon()
        slotFreed(failure: nil)
    }

    /// Back to the first waiter, or to the shelf of its loop; closed, if it is no longer
    /// usable or the pool is closing.
    private func giveBack(_ connection: PostgresConnection, idleSince: NIODeadline? = nil) {
        if connection.isClosed {
            slotFreed(failure: nil)
            return
        }
        let key = ObjectIdentifier(connection.eventLoop)
        let (waiter, close) = state.withLock { state -> (CheckedContinuation<Grant, any Error>?, Bool) in
            if state.closed {
                state.open -= 1
                return (nil, true)
            }
            if !state.waiters.isEmpty { return (state.waiters.removeFirst().continuation, false) }
            let now = NIODeadline.now()
            state.shelves[key, default: []].append(Idle(connection: connection, since: idleSince ?? now, answered: now))
            return (nil, false)
        }
        if close { connection.closeSoon() }
        waiter?.resume(returning: .connection(connection))
    }

    /// Pings connections idle for ``Upkeep/keepAliveInterval`` and closes those idle past
    /// ``Upkeep/idleTimeout`` beyond the last one of each loop. A pinged connection is out of its
    /// shelf meanwhile, as if leased, and is given back (or closed) after.
    private func lookAfterIdleConnections() {
        let now = NIODeadline.now()
        var toPing: [Idle] = []
        var toClose: [PostgresConnection] = []
        state.withLock { state in
            guard !state.closed else { return }
            for (key, shelf) in state.shelves {
                var kept: [Idle] = []
                for (index, idle) in shelf.enumerated() {
                    if idle.connection.isClosed || (now - idle.since >= upkeep.idleTimeout && index < shelf.count - 1) {
                        state.open -= 1
                        toClose.append(idle.connection)
                    } else if now - idle.answered >= upkeep.keepAliveInterval {
                        toPing.append(idle)
                    } else {
                        kept.append(idle)
                    }
                }
                state.shelves[key] = kept
            }
        }
        for connection in toClose { connection.closeSoon() }
        for idle in toPing {
            let connection = idle.connection
            let executor = EventLoopTaskExecutor(connection.eventLoop)
            Task(executorPreference: executor) {
                let guardTimer = connection.eventLoop.scheduleTask(in: self.upkeep.pingDeadline) { connection.closeSoon() }
                let answered = (try? await connection.queryWhileOpen("SELECT 1", logger: self.logger)) != nil
                guardTimer.cancel()
                if answered {
                    // A ping is not use: the idle timeout still counts from the last lease.
                    self.giveBack(connection, idleSince: idle.since)
                } else {
                    // Not back on the shelf, where it could still look open while it closes.
                    self.retire(connection)
                }
            }
        }
    }

    /// Refuses new leases and waiters, closes idle connections now and leased ones as they
    /// come back, and stops the look-after timer.
    func close() async {
        sweep.withLock { $0?.cancel(); $0 = nil }
        let (idle, waiters) = state.withLock { state -> ([PostgresConnection], [CheckedContinuation<Grant, any Error>]) in
            state.closed = true
            let idle = state.shelves.values.flatMap { $0.map(\.connection) }
            state.open -= idle.count
            state.shelves.removeAll()
            let waiters = state.waiters.map(\.continuation)
            state.waiters.removeAll()
            return (idle, waiters)
        }
        for waiter in waiters { waiter.resume(throwing: Self.closing) }
        for connection in idle { try? await connection.close() }
    }
}

extension PostgresConnection {
    /// Starts closing the connection without waiting for it (the future-returning
    /// `close()`, named so that async code does not pick the awaiting one). The
    /// connection keeps itself until its channel has closed: postgres-nio requires that
    /// of every connection it lets go.
    func closeSoon() {
        let close: () -> EventLoopFuture<Void> = self.close
        close().whenComplete { _ in withExtendedLifetime(self) {} }
    }
}
