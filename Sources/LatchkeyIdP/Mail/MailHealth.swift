import Foundation
import Synchronization

/// Whether mail is getting through, as this instance last found (docs/SECURITY.md,
/// "Mail"): for the operator (a log line when it turns, and the
/// `latchkey_mail_transport_failing` gauge), never for users. Only failures of the transport itself count (connecting, TLS, login,
/// the sender refused, a broken connection): a relay refusing one recipient says nothing
/// of it, and anyone can start sign-ups for addresses a relay refuses. Nothing is
/// refused while mail is failing: codes wait in the outbox and are retried while they
/// are valid, so no start is ever refused because of what strangers did.
final class MailHealth: Sendable {
    private let failuresInARow = Mutex(0)
    static let failuresBeforeFailing = 3

    func delivered() {
        failuresInARow.withLock { $0 = 0 }
    }

    /// Counts a transport failure; true when this one turned the transport to failing.
    @discardableResult
    func failed() -> Bool {
        failuresInARow.withLock {
            $0 += 1
            return $0 == Self.failuresBeforeFailing
        }
    }
}
