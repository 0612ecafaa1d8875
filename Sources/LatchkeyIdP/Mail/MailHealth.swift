import Foundation
import Synchronization

/// Whether mail can be sent now, as this instance last found (docs/SECURITY.md, "Mail"):
/// after three deliveries in a row failed for want of a server, flows that would mail a
/// code are refused with 503 until one gets through, so users learn at once that no code
/// will come. The answer depends only on the transport, never on the account, so it
/// tells nobody whether a name exists.
final class MailHealth: Sendable {
    private let failuresInARow = Mutex(0)
    static let failuresBeforeRefusing = 3

    var isFailing: Bool {
        failuresInARow.withLock { $0 >= Self.failuresBeforeRefusing }
    }

    func delivered() {
        failuresInARow.withLock { $0 = 0 }
    }

    func failed() {
        failuresInARow.withLock { $0 += 1 }
    }
}
