import Foundation
import LatchkeyCrypto
import LatchkeyProtocol

/// Checks the audit log against its chain, its rows' authentication codes and its signed
/// checkpoints (docs/SECURITY.md, "Audit log"), and names the first event found altered,
/// removed, inserted or out of order. The same check runs in the provider
/// (`GET /admin/events/verify`) and offline on the store (`latchkey admin events verify
/// --data-dir` or `--database`); it reads in pages, so a long log needs no more memory
/// than a short one, and writes nothing.
struct AuditVerifier: Sendable {
    let database: any ProviderDatabase
    let audit: AuditLog
    let key: VerifyingKey
    static let page = 1000

    /// `expecting`: a head kept outside the store (``AuditHeadMark``); the log must still
    /// run through it, or it was cut back, put back to an older copy, or emptied. A head
    /// older than the checkpoint retention pruned to cannot be compared and is let be.
    func verify(expecting expected: AuditHeadMark? = nil) async throws -> AdminAPI.EventVerification {
        let checkpoints = try await database.read { transaction in
            try await transaction.query("SELECT seq, chain_hash, signature FROM audit_checkpoints ORDER BY seq")
        }.map { row in (id: try row.decode("seq", as: Int64.self), hash: try row.decode("chain_hash", as: Data.self), signature: try row.decode("signature", as: String.self)) }
        let head = try await database.read { transaction in
            try await transaction.first("SELECT seq, chain_hash, signature FROM audit_head WHERE singleton = 1")
        }
        let oldest = try await database.read { transaction in
            try await transaction.first("SELECT min(seq) AS oldest FROM audit_events WHERE seq IS NOT NULL")
        }.flatMap { try $0.decode("oldest", as: Int64?.self) }
        // The chain is checked up to the head read above: a sealer on another instance may
        // seal more meanwhile, and those rows are looked at apart, below.
        let headID = try head?.decode("seq", as: Int64.self) ?? 0

        var result = AdminAPI.EventVerification(intact: true, checked: 0, anchor: 0, newest: 0, checkpoints: 0)
        func broken(_ id: Int64, _ problem: String) -> AdminAPI.EventVerification {
            result.intact = false
            result.firstBroken = id
            result.problem = problem
            return result
        }
        let checkpointsByID = Dictionary(checkpoints.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })

        // The anchor: nothing, or the checkpoint retention pruned to. With no sealed event
        // left (retention took them all, its record not sealed yet), the chain starts after
        // the head.
        var link = AuditChain.genesis
        var next: Int64 = 1
        var pruneClaim: Int64?
        let start = try oldest ?? head.map { try $0.decode("seq", as: Int64.self) + 1 } ?? 1
        if start > 1 {
            guard let anchor = checkpointsByID[start - 1] else {
                return broken(1, "events 1 to \(start - 1) are missing, and no checkpoint marks them pruned")
            }
            guard AuditChain.checkpointHolds(anchor.signature, id: anchor.id, hash: anchor.hash, key: key) else {
                return broken(anchor.id, "the checkpoint the chain starts from (event \(anchor.id)) is not signed by the audit key")
            }
            if let kept = expected, kept.id == anchor.id, !ConstantTime.isEqual(Data(kept.hash), anchor.hash) {
                return broken(anchor.id, "event \(anchor.id) is not the one the head kept outside the store names: the log was rewritten from there")
            }
            link = anchor.hash
            next = start
            result.anchor = anchor.id
            result.checkpoints += 1
            pruneClaim = anchor.id
        }

        var after = next - 1
        var sawPruneRecord = false
        while true {
            let cursor = after
            let rows = try await database.read { transaction in
                try await transaction.query("""
                    SELECT seq, chain_hash, mac, \(raw: AuditLog.columns) FROM audit_events
                    WHERE seq > \(cursor) AND seq <= \(headID) ORDER BY seq LIMIT \(Self.page)
                    """)
            }
            for row in rows {
                let id = try row.decode("seq", as: Int64.self)
                guard id == next else {
                    return broken(next, id > next
                        ? "event \(next) is missing: the chain jumps from \(next - 1) to \(id)"
                        : "event \(id) appears twice")
                }
                guard let entry = audit.authenticEntry(row) else {
                    return broken(id, "event \(id) was altered or inserted: its authentication code does not match its content")
                }
                link = try AuditChain.link(previous: link, id: id, entry: entry)
                guard let stored = try? row.decode("chain_hash", as: Data.self), ConstantTime.isEqual(stored, link) else {
                    return broken(id, "event \(id) is out of place: its hash does not follow from the event before it")
                }
                if let kept = expected, kept.id == id, !ConstantTime.isEqual(Data(kept.hash), link) {
                    return broken(id, "event \(id) is not the one the head kept outside the store names: the log was rewritten from there")
                }
                if let checkpoint = checkpointsByID[id], id != result.anchor {
                    guard ConstantTime.isEqual(checkpoint.hash, link), AuditChain.checkpointHolds(checkpoint.signature, id: id, hash: link, key: key) else {
                        return broken(id, "the checkpoint at event \(id) does not match the chain, or is not signed by the audit key")
                    }
                    result.checkpoints += 1
                }
                if entry.type == .auditPruned, let pruneClaim, entry.decodedDetails?.through == pruneClaim {
                    sawPruneRecord = true
                }
                result.checked += 1
                result.newest = id
                next += 1
            }
            guard let last = rows.last else { break }
            after = try last.decode("seq", as: Int64.self)
            if rows.count < Self.page { break }
        }
        let newest = next - 1
        result.newest = newest
        if let kept = expected, kept.id > newest {
            return broken(newest + 1, """
                the log ends at event \(newest), before the head kept outside the store (event \(kept.id)): events were cut from the end, \
                or the store was put back to an older copy
                """)
        }

        if let stray = checkpoints.last(where: { $0.id > newest }) {
            return broken(newest + 1, "events \(newest + 1) to \(stray.id) are missing: a checkpoint covers them")
        }
        if let head {
            let headHash = try head.decode("chain_hash", as: Data.self)
            guard AuditChain.checkpointHolds(try head.decode("signature", as: String.self), id: headID, hash: headHash, key: key) else {
                return broken(headID, "the newest signed checkpoint (event \(headID)) is not signed by the audit key")
            }
            if headID > newest { return broken(newest + 1, "events \(newest + 1) to \(headID) are missing from the end") }
            guard ConstantTime.isEqual(headHash, link) else {
                return broken(headID, "the newest signed checkpoint does not match the chain at event \(headID)")
            }
        }
        // A sealed row past the head read is either sealed since (the head has moved on to
        // cover it) or put there by hand.
        if let beyond = try await database.read({ transaction in
            try await transaction.first("SELECT min(seq) AS beyond FROM audit_events WHERE seq > \(headID)")
        }).flatMap({ try $0.decode("beyond", as: Int64?.self) }) {
            let current = try await database.read { transaction in
                try await transaction.first("SELECT seq FROM audit_head WHERE singleton = 1")
            }.map { try $0.decode("seq", as: Int64.self) } ?? 0
            if current < beyond {
                return broken(beyond, head == nil
                    ? "events are sealed but no signed checkpoint exists"
                    : "event \(beyond) was inserted after the newest signed checkpoint")
            }
        }
        if let pruneClaim, !sawPruneRecord {
            // The record is written with the pruning and sealed afterwards: look among the
            // waiting rows too, but accept only a row whose code holds.
            let waiting = try await database.read { transaction in
                try await transaction.query("""
                    SELECT mac, \(raw: AuditLog.columns) FROM audit_pending WHERE event_type = \(AuditEventType.auditPruned.rawValue)
                    """)
            }
            let recorded = waiting.contains { audit.authenticEntry($0)?.decodedDetails?.through == pruneClaim }
            if !recorded { return broken(1, "events 1 to \(pruneClaim) are missing, and no audit.pruned event records their pruning") }
        }
        result.head = AuditHeadMark(id: newest, hash: Array(link)).description
        return result
    }
}
