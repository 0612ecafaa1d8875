import Foundation
import LatchkeyCrypto
import LatchkeyProtocol
import Logging

/// Gives waiting events their place in the chain (docs/ARCHITECTURE.md, "The audit log"):
/// one sealer at a time across every instance of the store, under an exclusive lock, takes
/// the events waiting in `audit_pending` in the order they were written, links each to the
/// one before (``AuditChain/link(previous:id:entry:)``), moves the batch into
/// `audit_events` with its links in one statement, signs the new head, and keeps a
/// checkpoint now and then. Decisions never wait for it: a sign-in writes one row and goes
/// on, so instances writing at once do not queue behind one chain head. It runs about once
/// a second (``AuditSealing``) and before every admin read of the log, so what an admin
/// reads is sealed.
struct AuditSealer: Sendable {
    let context: ProviderContext
    /// Events sealed per transaction.
    static let batch = 500

    /// Whether any event waits to be sealed: one lookup on the waiting table's key,
    /// outside any transaction and lock.
    func hasWaiting() async throws -> Bool {
        try await context.database.read { transaction in
            try await transaction.first("SELECT id FROM audit_pending LIMIT 1") != nil
        }
    }

    /// Seals every waiting event; returns how many, by type.
    @discardableResult
    func seal(now: Date = ProviderClock.now) async throws -> [AuditEventType: Int] {
        guard context.audit.enabled else { return [:] }
        var total: [AuditEventType: Int] = [:]
        let journal = context.audit.journal
        while true {
            let sealed = try await sealBatch(now: now)
            for link in sealed {
                total[link.entry.type, default: 0] += 1
                journal?.send(link.entry.event(id: link.id, hash: link.hash))
            }
            if sealed.count < Self.batch { break }
        }
        for (type, count) in total { context.metrics.auditEvents(type, count: count) }
        return total
    }

    /// One transaction's worth: the entries it sealed, with their ids and links.
    private func sealBatch(now: Date) async throws -> [(entry: AuditEntry, id: Int64, hash: Data)] {
        let key = try await context.auditSigningKey()
        let issuer = context.issuer.absoluteString
        return try await context.database.exclusiveTransaction(lock: AuditChain.lockKey) { transaction in
            let rows = try await transaction.query("""
                SELECT id, \(raw: AuditLog.columns) FROM audit_pending ORDER BY id LIMIT \(Self.batch)
                """)
            guard !rows.isEmpty else { return [] }
            let head = try await transaction.first("SELECT seq, chain_hash FROM audit_head WHERE singleton = 1")
            var id = try head?.decode("seq", as: Int64.self) ?? 0
            var link = try head?.decode("chain_hash", as: Data.self) ?? AuditChain.genesis
            var sealed: [(entry: AuditEntry, id: Int64, hash: Data)] = []
            sealed.reserveCapacity(rows.count)
            // A waiting row whose nonce a sealed event (or an earlier row of this batch)
            // already has is a copy, authentication code and all: it is removed, never
            // sealed as a second event (docs/SECURITY.md, "Audit log").
            var seen = try await Self.sealedNonces(of: rows, in: transaction)
            var discarded = 0
            // The batch's places as a `VALUES` list (waiting row, sequence number, link):
            // one statement copies the rows, exactly as written, into the chain, and one
            // removes them from the waiting table, not a statement per event.
            var places: SQLStatement = "WITH sealed(pending, seq, chain_hash) AS (VALUES "
            var pending: SQLStatement = "WITH sealed(pending) AS (VALUES "
            for row in rows {
                let rowID = try row.decode("id", as: Int64.self)
                if let nonce = try? row.decode("nonce", as: Data?.self), !seen.insert(nonce).inserted {
                    pending.append("\(raw: sealed.isEmpty && discarded == 0 ? "" : ", ")(\(rowID))")
                    discarded += 1
                    continue
                }
                // A row that does not decode is still chained, as it is: verify names it.
                let entry = (try? AuditEntry(row: row)) ?? AuditEntry(
                    time: 0, type: AuditEventType(rawValue: "unreadable"), outcome: .failure, error: nil, actor: .anonymous, subject: nil,
                    client: nil, address: nil, userAgent: nil, details: nil
                )
                id += 1
                link = try AuditChain.link(previous: link, id: id, entry: entry)
                places.append("\(raw: sealed.isEmpty ? "" : ", ")(\(rowID), \(id), \(link))")
                pending.append("\(raw: sealed.isEmpty && discarded == 0 ? "" : ", ")(\(rowID))")
                sealed.append((entry, id, link))
            }
            if discarded > 0 {
                context.logger.error("audit rows discarded: each repeats an event already sealed (a copy put into the waiting table)", metadata: [
                    "count": .stringConvertible(discarded),
                ])
            }
            places.append("""
                ) INSERT INTO audit_events (seq, chain_hash, \(raw: AuditLog.columns), mac)
                SELECT s.seq, s.chain_hash, \(raw: AuditLog.columns(prefix: "p.")), p.mac
                FROM sealed s JOIN audit_pending p ON p.id = s.pending ORDER BY s.seq
                """)
            pending.append(") DELETE FROM audit_pending WHERE id IN (SELECT pending FROM sealed)")
            // The copy first: it reads the waiting rows the second statement removes.
            if !sealed.isEmpty { try await transaction.execute(places) }
            try await transaction.execute(pending)
            guard !sealed.isEmpty else { return sealed }
            let signature = try AuditChain.sign(id: id, hash: link, issuer: issuer, now: now, key: key)
            if head == nil {
                try await transaction.execute("""
                    INSERT INTO audit_head (singleton, seq, chain_hash, signature, updated_at) VALUES (1, \(id), \(link), \(signature), \(now))
                    """)
            } else {
                try await transaction.execute("""
                    UPDATE audit_head SET seq = \(id), chain_hash = \(link), signature = \(signature), updated_at = \(now) WHERE singleton = 1
                    """)
            }
            let last = try await transaction.first("SELECT seq, created_at FROM audit_checkpoints ORDER BY seq DESC LIMIT 1")
            let lastID = try last?.decode("seq", as: Int64.self) ?? 0
            let lastTime = try last?.decode("created_at", as: Date.self) ?? .distantPast
            if id - lastID >= AuditChain.checkpointEvery || now.timeIntervalSince(lastTime) >= AuditChain.checkpointInterval {
                try await transaction.execute("""
                    INSERT INTO audit_checkpoints (seq, chain_hash, signature, created_at) VALUES (\(id), \(link), \(signature), \(now))
                    """)
            }
            return sealed
        }
    }

    /// The nonces of `rows` that sealed events already carry: one lookup on the unique
    /// index for the whole batch.
    private static func sealedNonces(of rows: [SQLRow], in transaction: any SQLTransaction) async throws -> Set<Data> {
        let nonces = rows.compactMap { try? $0.decode("nonce", as: Data?.self) }
        guard !nonces.isEmpty else { return [] }
        var query: SQLStatement = "SELECT nonce FROM audit_events WHERE nonce IN ("
        for (index, nonce) in nonces.enumerated() { query.append("\(raw: index == 0 ? "" : ", ")\(nonce)") }
        query.append(")")
        return Set(try await transaction.query(query).map { try $0.decode("nonce", as: Data.self) })
    }

    /// Retention (`serve --audit-retention`): removes whole segments, every event up to
    /// the newest kept checkpoint whose event is older than `retention`, and the
    /// checkpoints before it; that checkpoint anchors the chain from then on, and an
    /// `audit.pruned` event, chained like any other, says so, so a segment cut without it
    /// shows as removed.
    func prune(retention: TimeInterval, now: Date = ProviderClock.now) async throws {
        guard context.audit.enabled else { return }
        let cutoff = now.addingTimeInterval(-retention)
        let audit = context.audit
        try await context.database.exclusiveTransaction(lock: AuditChain.lockKey) { transaction in
            guard let row = try await transaction.first("""
                SELECT max(c.seq) AS through FROM audit_checkpoints c JOIN audit_events e ON e.seq = c.seq WHERE e.occurred_at < \(cutoff)
                """), let through = try row.decode("through", as: Int64?.self) else { return }
            let oldest = try await transaction.first("SELECT min(seq) AS oldest FROM audit_events WHERE seq IS NOT NULL")
            guard let first = try oldest?.decode("oldest", as: Int64?.self), first <= through else { return }
            try await transaction.execute("DELETE FROM audit_events WHERE seq IS NOT NULL AND seq <= \(through)")
            try await transaction.execute("DELETE FROM audit_checkpoints WHERE seq < \(through)")
            try await audit.record(
                AuditEntry(.auditPruned, actor: .provider, details: AuditEvent.Details(through: through), now: now), in: transaction
            )
        }
    }
}
