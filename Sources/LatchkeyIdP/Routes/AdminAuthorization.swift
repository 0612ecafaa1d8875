import Foundation
import Hummingbird
import LatchkeyCrypto
import LatchkeyProtocol
import Logging
import LatchkeyOAuth

/// The admin bearer token check (docs/SECURITY.md, "The provider's store"): compared in
/// constant time, and failures throttled per client address (an IPv6 /64), so the token
/// cannot be guessed at speed; another address is not affected.
struct AdminAuthorization: Sendable {
    /// Failed admin authentications a client address may make a minute; past it, every
    /// admin request from that address is refused (429) until the minute is over.
    static let failuresPerMinute = 10

    private let expected: Data
    private let failures = RateLimiter(limit: failuresPerMinute)
    private let audit: AuditLog
    private let database: any ProviderDatabase

    init(token: String, audit: AuditLog, database: any ProviderDatabase) {
        expected = Data(token.utf8)
        self.audit = audit
        self.database = database
    }

    /// Throws 429 for an address past its failures, 401 (counted) for a wrong token.
    func check(_ request: Request, _ context: ProviderRequestContext) async throws {
        let address = context.limitKey
        guard !failures.isExhausted(address) else {
            throw ProviderError.slowDown("too many failed admin authentications; try again in a minute")
        }
        guard let token = HTTPSupport.bearerToken(request), ConstantTime.isEqual(Data(token.utf8), expected) else {
            let count = failures.count(address)
            context.logger.warning("admin authentication failed", metadata: ["client": .string(address)])
            if count == 1 {
                // Once per address and window, however many tries follow.
                await audit.recordQuietly(AuditEntry(
                    .adminTokenRefused, outcome: .failure, error: .invalidToken, actor: .anonymous,
                    details: AuditEvent.Details(windowSeconds: failures.windowSeconds)
                ), in: database, logger: context.logger)
            }
            throw ProviderError.unauthorized
        }
    }
}
