import Foundation
import Logging
import ServiceLifecycle

/// Hands the outbox's messages to the ``MailTransport`` (docs/ARCHITECTURE.md,
/// "Operations: mail"). A message is written to the outbox in the transaction that made
/// its code, so it exists exactly when the code does; this service then claims due
/// messages (a lease in `next_attempt_at`, so two instances never send one twice at
/// once), sends them, and records the outcome. A failure is retried with backoff (5 s,
/// 10 s, 20 s, … up to a minute) while the code can still be used (its lifetime); then
/// the message is marked failed. Sent messages lose their body and code in the store.
/// Logs name the recipient's domain and the server's reply, never a code or a body.
struct MailDelivery: Service {
    let context: ProviderContext
    let transport: any MailTransport
    let from: String
    /// How often the queue is looked at when idle.
    var interval: Duration = .milliseconds(250)

    private struct Due: Sendable {
        var id: Int64
        var message: MailMessage
        var createdAt: Date
        var attempts: Int
    }

    func run() async throws {
        try await context.configuration.clock.bound { try await deliverLoop() }
    }

    private func deliverLoop() async throws {
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            let sent = (try? await deliverDue()) ?? 0
            if sent == 0 {
                let interval = interval
                _ = try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            }
        }
    }

    /// Sends what is due now; the number of messages tried.
    @discardableResult
    func deliverDue(now: Date = ProviderClock.now) async throws -> Int {
        try await context.prepare()
        let lease = now.addingTimeInterval(120)
        let due = try await context.database.transaction { transaction in
            try await transaction.query("""
                UPDATE outbox SET next_attempt_at = \(lease), attempts = attempts + 1
                WHERE next_attempt_at <= \(now) AND delivered_at IS NULL AND failed_at IS NULL AND id IN (
                    SELECT id FROM outbox WHERE delivered_at IS NULL AND failed_at IS NULL AND next_attempt_at <= \(now) ORDER BY id LIMIT 20)
                RETURNING id, recipient, subject, body, created_at, attempts
                """).map { row in
                Due(id: try row.decode("id"), message: MailMessage(to: try row.decode("recipient"), subject: try row.decode("subject"), body: try row.decode("body")),
                    createdAt: try row.decode("created_at"), attempts: try row.decode("attempts"))
            }
        }
        for message in due {
            await deliver(message)
        }
        return due.count
    }

    private func deliver(_ due: Due) async {
        let domain = due.message.to.split(separator: "@").last.map(String.init) ?? "?"
        do {
            try await transport.send(due.message, from: from)
            context.mailHealth.delivered()
            context.metrics.mailDelivered()
            context.metrics.mailTransportFailing(false)
            try? await context.database.transaction { transaction in
                try await transaction.execute("UPDATE outbox SET delivered_at = \(ProviderClock.now), body = '', code = NULL WHERE id = \(due.id)")
            }
        } catch {
            let mailError = error as? MailError
            // One recipient refused (a relay's 450 for an address it has not verified)
            // says nothing of the transport: anyone can start a sign-up for such an address.
            if mailError?.concernsTransport ?? true, context.mailHealth.failed() {
                context.metrics.mailTransportFailing(true)
                context.logger.error("mail is failing: \(MailHealth.failuresBeforeFailing) deliveries in a row could not be handed to the transport; codes wait in the outbox and are retried", metadata: [
                    "error": .string(mailError.map { "\($0.code)" } ?? "\(type(of: error))"),
                ])
            }
            let now = ProviderClock.now
            let backoff = min(60, 5 * pow(2, Double(due.attempts - 1)))
            let giveUp = mailError?.isFinal == true
                || now.addingTimeInterval(backoff) >= due.createdAt.addingTimeInterval(context.configuration.enrollmentCodeLifetime)
            context.logger.warning(giveUp ? "mail not delivered; giving up" : "mail not delivered; will retry", metadata: [
                "to_domain": .string(domain), "attempts": .stringConvertible(due.attempts),
                "error": .string(mailError.map { "\($0.code): \($0.reason)" } ?? "\(type(of: error))"),
            ])
            if giveUp { context.metrics.mailGaveUp() }
            try? await context.database.transaction { transaction in
                if giveUp {
                    try await transaction.execute("UPDATE outbox SET failed_at = \(now), body = '', code = NULL WHERE id = \(due.id)")
                } else {
                    try await transaction.execute("UPDATE outbox SET next_attempt_at = \(now.addingTimeInterval(backoff)) WHERE id = \(due.id)")
                }
            }
        }
    }
}
