import Foundation
import Hummingbird
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import Logging

/// The audit log's admin endpoints (docs/PROTOCOL.md, "Audit log"): every read seals what
/// is waiting first, so an admin sees every decision committed before the request.
extension AdminRoutes {
    @Sendable func listEvents(_ request: Request, context: ProviderRequestContext) async throws -> AdminAPI.EventPage {
        let filter = try Self.eventFilter(try HTTPSupport.query(request))
        try await AuditSealer(context: provider.context).seal()
        return try await AuditReader(database: provider.context.database).page(filter)
    }

    @Sendable func verifyEvents(_ request: Request, context: ProviderRequestContext) async throws -> AdminAPI.EventVerification {
        let expected = try HTTPSupport.query(request)[AdminAPI.EventQuery.expect].map { text in
            guard let mark = AuditHeadMark(text) else {
                throw ProviderError.badRequest(.invalidRequest, "expect must be ID:HASH, as verify printed it as head")
            }
            return mark
        }
        try await AuditSealer(context: provider.context).seal()
        let verification = try await provider.context.auditVerifier().verify(expecting: expected)
        if !verification.intact {
            context.logger.error("audit log broken", metadata: [
                "event": .stringConvertible(verification.firstBroken ?? 0), "problem": .string(verification.problem ?? ""),
            ])
        }
        return verification
    }

    @Sendable func listEventCheckpoints(_: Request, context: ProviderRequestContext) async throws -> AdminAPI.EventCheckpoints {
        try await AuditSealer(context: provider.context).seal()
        let checkpoints = try await AuditReader(database: provider.context.database).checkpoints()
        let jwk = try await provider.context.auditSigningKey().publicKey.jwk
        return AdminAPI.EventCheckpoints(checkpoints: checkpoints, key: String(decoding: try JSONEncoder().encode(jwk), as: UTF8.self))
    }

    /// The query of `GET /admin/events`, each value checked: a cursor is a whole number,
    /// a limit 1 to ``AdminAPI/EventQuery/maximumLimit``, a type or subject of bounded
    /// length, a time in RFC 3339.
    static func eventFilter(_ query: [String: String]) throws -> AuditReader.Filter {
        var filter = AuditReader.Filter()
        if let text = query[AdminAPI.EventQuery.after] {
            guard text.utf8.count <= 19, let after = Int64(text), after >= 0 else {
                throw ProviderError.badRequest(.invalidRequest, "after must be an event id (a whole number from 0)")
            }
            filter.after = after
        }
        if let text = query[AdminAPI.EventQuery.limit] {
            guard text.utf8.count <= 9, let limit = Int(text), (1...AdminAPI.EventQuery.maximumLimit).contains(limit) else {
                throw ProviderError.badRequest(.invalidRequest, "limit must be 1 to \(AdminAPI.EventQuery.maximumLimit)")
            }
            filter.limit = limit
        }
        if let text = query[AdminAPI.EventQuery.type] {
            guard (1...64).contains(text.utf8.count) else { throw ProviderError.badRequest(.invalidRequest, "type must be 1 to 64 bytes") }
            filter.type = AuditEventType(rawValue: text)
        }
        if let text = query[AdminAPI.EventQuery.subject] {
            guard (1...ProtocolIdentifier.maximumLength).contains(text.utf8.count) else {
                throw ProviderError.badRequest(.invalidRequest, "subject must be 1 to \(ProtocolIdentifier.maximumLength) bytes")
            }
            filter.subject = text
        }
        if let text = query[AdminAPI.EventQuery.since] {
            guard let since = AuditEvent.parseTime(text) else {
                throw ProviderError.badRequest(.invalidRequest, "since must be an RFC 3339 date-time")
            }
            filter.since = since
        }
        return filter
    }
}
