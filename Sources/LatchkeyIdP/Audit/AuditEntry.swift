import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol

/// One decision, as the provider writes it into `audit_events` in the transaction that
/// makes the decision (docs/ARCHITECTURE.md, "The audit log"): what ``AuditEvent`` shows,
/// without the place in the chain, which the sealer gives it later.
struct AuditEntry: Sendable, Equatable {
    /// Milliseconds since 1970: what the store keeps, so what is hashed is what is read.
    var time: Int64
    var type: AuditEventType
    var outcome: AuditEvent.Outcome
    var error: String?
    var actor: AuditEvent.Actor
    var subject: String?
    var client: String?
    var address: String?
    var userAgent: String?
    /// ``AuditEvent/Details`` as JSON with sorted keys, made once: the hash covers these
    /// bytes as stored, never a re-encoding.
    var details: String?
    /// 16 random bytes that make this event one of a kind: its code and its link cover
    /// them, and no two sealed events share them (`audit_events_nonce`), so a row copied,
    /// code and all, cannot be sealed a second time. Nil only for events written before
    /// schema 16.
    var nonce: Data?

    /// The length of ``nonce``.
    static let nonceLength = 16

    /// The longest credential id kept in an event's details, in base64url characters: an
    /// id an attacker presents may be up to 1,023 bytes.
    static let maximumCredentialLength = 96

    /// An entry made now, for the request being served (``AuditRequester``).
    init(
        _ type: AuditEventType, outcome: AuditEvent.Outcome = .success, error: ErrorCode? = nil, actor: AuditEvent.Actor,
        subject: String? = nil, client: String? = nil, details: AuditEvent.Details? = nil, now: Date = ProviderClock.now
    ) {
        let requester = AuditRequester.current
        self.init(
            time: Int64((now.timeIntervalSince1970 * 1000).rounded(.down)), type: type, outcome: outcome, error: error?.rawValue, actor: actor,
            subject: subject, client: client, address: requester?.address, userAgent: requester?.userAgent,
            details: details.flatMap(Self.encode), nonce: Self.newNonce()
        )
    }

    init(
        time: Int64, type: AuditEventType, outcome: AuditEvent.Outcome, error: String?, actor: AuditEvent.Actor, subject: String?,
        client: String?, address: String?, userAgent: String?, details: String?, nonce: Data? = nil
    ) {
        self.time = time
        self.type = type
        self.outcome = outcome
        self.error = error
        self.actor = actor
        self.subject = subject
        self.client = client
        self.address = address
        self.userAgent = userAgent
        self.details = details
        self.nonce = nonce
    }

    /// A fresh ``nonce``: from OpenSSL's generator, or, should it ever fail, from the
    /// system's through a random UUID, so no event is ever written without one.
    static func newNonce() -> Data {
        (try? SecureRandom.bytes(count: nonceLength)) ?? withUnsafeBytes(of: UUID().uuid) { Data($0) }
    }

    /// `details` as one JSON object, members in sorted order, absent ones left out, written
    /// directly (``JSONObjectWriter``): it runs for every event a decision writes, and a
    /// general encoder costs more than the rest of the event (docs/PERFORMANCE.md, "The
    /// audit log").
    static func encode(_ details: AuditEvent.Details) -> String? {
        var writer = JSONObjectWriter(capacity: 256)
        writer.string("attestation", ifPresent: details.attestation)
        writer.string("change", ifPresent: details.change)
        writer.string("credential", ifPresent: details.credential)
        writer.string("fingerprint", ifPresent: details.fingerprint)
        writer.integer("gid", ifPresent: details.gid)
        writer.string("grantType", ifPresent: details.grantType)
        writer.string("group", ifPresent: details.group)
        writer.strings("labels", ifPresent: details.labels)
        writer.string("limit", ifPresent: details.limit)
        writer.strings("principals", ifPresent: details.principals)
        writer.string("remoteHost", ifPresent: details.remoteHost)
        writer.string("scope", ifPresent: details.scope)
        writer.string("serial", ifPresent: details.serial)
        writer.string("service", ifPresent: details.service)
        if let sudo = details.sudo { writer.json("sudo", (sudo ? "true" : "false").utf8) }
        writer.integer("through", ifPresent: details.through)
        writer.integer("uid", ifPresent: details.uid)
        writer.string("username", ifPresent: details.username)
        writer.string("validAfter", ifPresent: details.validAfter)
        writer.string("validBefore", ifPresent: details.validBefore)
        writer.integer("windowSeconds", ifPresent: details.windowSeconds)
        return String(decoding: writer.finishedBytes(), as: UTF8.self)
    }

    /// The entry's bytes for its authentication code and its link in the chain: a version
    /// label, then each member in a fixed order, absent as one byte 0xFF, present as 0x00,
    /// its UTF-8 length (4 bytes, big-endian) and its bytes. Unambiguous without parsing:
    /// no value can pass for the next member. An event with a ``nonce`` is labelled
    /// `latchkey-audit-event-2` and ends with the nonce in base64url; one from before
    /// schema 16 keeps `latchkey-audit-event-1` and its bytes as they were.
    var canonical: Data {
        // One buffer, each member's UTF-8 appended in place: an entry is hashed for every
        // event, and a `Data` and an array per member cost more than the hash.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(128 + (userAgent?.utf8.count ?? 0) + (details?.utf8.count ?? 0))
        bytes.append(contentsOf: (nonce == nil ? "latchkey-audit-event-1" : "latchkey-audit-event-2").utf8)
        func append(_ member: String?) {
            guard let member else {
                bytes.append(0xFF)
                return
            }
            let count = UInt32(member.utf8.count)
            bytes.append(0x00)
            bytes.append(contentsOf: [UInt8(truncatingIfNeeded: count >> 24), UInt8(truncatingIfNeeded: count >> 16), UInt8(truncatingIfNeeded: count >> 8), UInt8(truncatingIfNeeded: count)])
            bytes.append(contentsOf: member.utf8)
        }
        append(String(time))
        append(type.rawValue)
        append(outcome.rawValue)
        append(error)
        append(actor.kind.rawValue)
        append(actor.id)
        append(subject)
        append(client)
        append(address)
        append(userAgent)
        append(details)
        if let nonce { append(Base64URL.encode(nonce)) }
        return Data(bytes)
    }

    /// ``details`` as the typed members they were encoded from; nil when absent or unreadable.
    var decodedDetails: AuditEvent.Details? {
        details.flatMap { try? JSONDecoder().decode(AuditEvent.Details.self, from: Data($0.utf8)) }
    }

    /// The event an admin reads, once the entry has its place in the chain.
    func event(id: Int64, hash: Data?) -> AuditEvent {
        AuditEvent(
            id: id, time: Date(timeIntervalSince1970: Double(time) / 1000), type: type, outcome: outcome, error: error, actor: actor,
            subject: subject, client: client, address: address, userAgent: userAgent,
            details: decodedDetails,
            hash: hash.map(Base64URL.encode)
        )
    }
}
