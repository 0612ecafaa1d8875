import Foundation
import Logging
import ServiceLifecycle

/// Drops what has expired (sessions, codes, bind jobs, tokens, families, flows, counters,
/// old mail) once a minute, so abandoned flows and old tokens do not pile up. Any
/// instance may run it; deleting expired rows twice is harmless. Expired rows are
/// refused by every query on their own, so pruning is about space, not correctness.
struct Housekeeping: Service {
    let provider: Provider
    let interval: Duration

    func run() async throws {
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            let interval = interval
            // Shutdown does not wait out the interval.
            _ = try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            guard !Task.isCancelled, !Task.isShuttingDownGracefully else { return }
            do {
                try await provider.context.prepare()
                try await prune(now: provider.context.configuration.clock.now)
                try await audit(now: provider.context.configuration.clock.now)
            } catch {
                provider.context.logger.warning("housekeeping failed", metadata: ["error": .string("\(error)")])
            }
        }
    }

    /// Prunes what audit retention lets go (sealing runs on its own, ``AuditSealing``).
    func audit(now: Date) async throws {
        try await AuditSealer(context: provider.context).prune(retention: provider.context.configuration.auditRetention, now: now)
    }

    func prune(now: Date) async throws {
        let configuration = provider.context.configuration
        let transfers = provider.transfers
        try await provider.context.database.transaction { transaction in
            try await SpentTickets.prune(now: now, in: transaction)
            try await DPoPBinding.prune(now: now, in: transaction)
            try await ClientAuthenticator.prune(now: now, in: transaction)
            try await DeviceAuthorizations.prune(now: now, in: transaction)
            try await transaction.execute("DELETE FROM bind_jobs WHERE expires_at <= \(now)")
            // Codes are kept a while past expiry, so a late replay still finds its family.
            try await transaction.execute("DELETE FROM authorization_codes WHERE expires_at <= \(now.addingTimeInterval(-configuration.authorizationCodeLifetime))")
            try await transaction.execute("DELETE FROM tokens WHERE expires_at <= \(now)")
            try await transaction.execute("""
                DELETE FROM grant_families WHERE expires_at <= \(now.addingTimeInterval(-configuration.accessTokenLifetime))
                """)
            try await transaction.execute("DELETE FROM enrollments WHERE expires_at <= \(now)")
            try await AttemptCounters.prune(now: now, in: transaction)
            try await MailedCode.prune(now: now, in: transaction)
            try await Outbox.pruneDecoys(in: transaction)
            if configuration.mail == nil {
                try await transaction.execute("DELETE FROM outbox WHERE id <= (SELECT max(id) FROM outbox) - \(Outbox.retained)")
            } else {
                // A queue: only what was sent or given up on goes.
                try await transaction.execute("""
                    DELETE FROM outbox WHERE id <= (SELECT max(id) FROM outbox) - \(Outbox.retained) AND (delivered_at IS NOT NULL OR failed_at IS NOT NULL)
                    """)
            }
            try await transfers.prune(now: now, in: transaction)
        }
    }
}
