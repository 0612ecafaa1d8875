import Foundation
import LatchkeyCrypto
import LatchkeyProtocol
import Logging
import Synchronization

/// Writes the provider's decisions into `audit_pending` (docs/ARCHITECTURE.md, "The audit
/// log"), each in the transaction, or the one statement, that makes the decision: a
/// decision whose commit fails leaves no event, and no event exists for something that
/// did not happen. Each row carries an authentication code (HMAC-SHA-256 under a key
/// sealed in the store, ``AuditChain/macKeyName``) over its canonical bytes, so a row
/// inserted or edited by someone who can write the database but does not hold the store
/// key is found out, sealed or not. The sealer (``AuditSealer``) later moves each row
/// into `audit_events` with its place in the hash chain.
final class AuditLog: Sendable {
    /// Whether events are written at all (`serve --no-audit`, for the benchmark's
    /// comparison; on by default).
    let enabled: Bool
    private let key = Mutex<SymmetricKey?>(nil)
    private let attachedJournal = Mutex<AuditJournal?>(nil)
    /// Refusal events whose own write failed while the store blinked (``recordQuietly``),
    /// oldest first, written again before the next quiet write and at every sealing tick
    /// (``writeDeferred(in:logger:)``), each with the time of its decision.
    private let deferred = Mutex<[AuditEntry]>([])

    /// The most refusal events kept for a store that stays down; past it the oldest are
    /// dropped (and logged): a flood of refusals cannot grow memory without bound.
    static let maximumDeferred = 10_000

    /// Where sealed events are copied (`serve --audit-syslog`), if anywhere.
    var journal: AuditJournal? { attachedJournal.withLock { $0 } }

    func attach(_ journal: AuditJournal) {
        attachedJournal.withLock { $0 = journal }
    }

    init(enabled: Bool) {
        self.enabled = enabled
    }

    /// Called once the store's secrets are loaded.
    func load(key: SymmetricKey) {
        self.key.withLock { $0 = key }
    }

    func authenticationCode(_ entry: AuditEntry) throws -> Data {
        guard let key = key.withLock({ $0 }) else { throw StoreError.keyUnavailable("the audit key is not loaded yet") }
        return try HMAC.authenticationCode(for: entry.canonical, using: key)
    }

    /// The entry of a row read with ``columns`` and `mac`, when the row's authentication
    /// code holds (compared in constant time); nil for a row altered or put in by hand.
    func authenticEntry(_ row: SQLRow) -> AuditEntry? {
        guard let entry = try? AuditEntry(row: row), let mac = try? row.decode("mac", as: Data.self),
              let code = try? authenticationCode(entry), ConstantTime.isEqual(code, mac)
        else { return nil }
        return entry
    }

    /// The statement that writes `entry`; nil when the log is off.
    func insert(_ entry: AuditEntry) throws -> SQLStatement? {
        guard enabled else { return nil }
        let mac = try authenticationCode(entry)
        return """
            INSERT INTO audit_pending (\(raw: Self.columns), mac)
            VALUES (\(entry.time), \(entry.type.rawValue), \(entry.outcome.rawValue), \(entry.error), \(entry.actor.kind.rawValue),
                \(entry.actor.id), \(entry.subject), \(entry.client), \(entry.address), \(entry.userAgent), \(entry.details), \(entry.nonce), \(mac))
            """
    }

    /// `entry` as a step of a PostgreSQL statement of data-modifying CTEs: written only
    /// when the step `after` returned a row (a sign-in whose code was issued). Nil when the
    /// log is off.
    func insert(_ entry: AuditEntry, after step: String) throws -> SQLStatement? {
        guard enabled else { return nil }
        let mac = try authenticationCode(entry)
        return """
            INSERT INTO audit_pending (\(raw: Self.columns), mac)
            SELECT \(entry.time), \(entry.type.rawValue), \(entry.outcome.rawValue), CAST(\(entry.error) AS TEXT), \(entry.actor.kind.rawValue),
                CAST(\(entry.actor.id) AS TEXT), CAST(\(entry.subject) AS TEXT), CAST(\(entry.client) AS TEXT), CAST(\(entry.address) AS TEXT),
                CAST(\(entry.userAgent) AS TEXT), CAST(\(entry.details) AS TEXT), CAST(\(entry.nonce) AS BYTEA), \(mac)
            FROM \(raw: step) LIMIT 1
            """
    }

    /// Writes `entry` in `transaction`.
    func record(_ entry: AuditEntry, in transaction: any SQLTransaction) async throws {
        guard let statement = try insert(entry) else { return }
        try await transaction.execute(statement)
    }

    /// Writes `entry` as a unit of its own: a refusal that changed nothing else
    /// (`signin.failed`, `admin.token.refused`, `ratelimit.engaged`).
    func record(_ entry: AuditEntry, in database: any ProviderDatabase) async throws {
        guard let statement = try insert(entry) else { return }
        _ = try await database.write(statement)
    }

    /// ``record(_:in:)-(_,any ProviderDatabase)`` for a refusal that stands whether or not
    /// its event is written (a store that is down must not turn a 429 into a 503): a
    /// failed write is kept and tried again (``writeDeferred(in:logger:)``), so an event the
    /// log promises does not vanish when the store blinks (a database restart).
    func recordQuietly(_ entry: AuditEntry, in database: any ProviderDatabase, logger: Logger) async {
        guard enabled else { return }
        await writeDeferred(in: database, logger: logger)
        do {
            try await record(entry, in: database)
        } catch {
            logger.warning("audit event deferred: the store refused it; it is written again shortly", metadata: [
                "type": .string(entry.type.rawValue), "error": .string("\(type(of: error))"),
            ])
            keep([entry], logger: logger)
        }
    }

    /// Writes the refusal events a blinking store refused, oldest first; stops at the
    /// first that fails again and keeps it and the rest.
    func writeDeferred(in database: any ProviderDatabase, logger: Logger) async {
        let waiting = deferred.withLock { entries -> [AuditEntry] in
            defer { entries.removeAll() }
            return entries
        }
        for (index, entry) in waiting.enumerated() {
            do {
                try await record(entry, in: database)
            } catch {
                keep(Array(waiting[index...]), logger: logger)
                return
            }
        }
        if !waiting.isEmpty { logger.notice("deferred audit events written", metadata: ["count": .stringConvertible(waiting.count)]) }
    }

    /// Puts `entries` back ahead of any deferred since, dropping the oldest past the cap.
    private func keep(_ entries: [AuditEntry], logger: Logger) {
        let dropped = deferred.withLock { waiting -> Int in
            waiting = entries + waiting
            let excess = max(0, waiting.count - Self.maximumDeferred)
            waiting.removeFirst(excess)
            return excess
        }
        if dropped > 0 {
            logger.error("audit events dropped: the store has refused writes too long", metadata: ["count": .stringConvertible(dropped)])
        }
    }

    /// The content columns, in ``AuditEntry``'s order.
    static let columns = columns(prefix: "")

    /// ``columns`` qualified by a table alias (`"p."`).
    static func columns(prefix: String) -> String {
        ["occurred_at", "event_type", "outcome", "error", "actor_kind", "actor_id", "subject", "client", "address", "user_agent", "details", "nonce"]
            .map { prefix + $0 }.joined(separator: ", ")
    }
}

extension AuditEntry {
    /// The entry of a row read with ``AuditLog/columns``.
    init(row: SQLRow) throws {
        guard let type = try? row.decode("event_type", as: String.self), let outcome = AuditEvent.Outcome(rawValue: try row.decode("outcome", as: String.self)),
              let actorKind = AuditEvent.Actor.Kind(rawValue: try row.decode("actor_kind", as: String.self))
        else { throw StoreError.corruptRow("an audit event's type, outcome or actor is not one the provider writes") }
        self.init(
            time: try row.decode("occurred_at", as: Int64.self), type: AuditEventType(rawValue: type), outcome: outcome,
            error: try row.decode("error", as: String?.self), actor: AuditEvent.Actor(kind: actorKind, id: try row.decode("actor_id", as: String?.self)),
            subject: try row.decode("subject", as: String?.self), client: try row.decode("client", as: String?.self),
            address: try row.decode("address", as: String?.self), userAgent: try row.decode("user_agent", as: String?.self),
            details: try row.decode("details", as: String?.self), nonce: try row.decode("nonce", as: Data?.self)
        )
    }
}
