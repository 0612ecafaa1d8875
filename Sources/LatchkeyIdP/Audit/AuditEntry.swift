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
            details: details.flatMap(Self.encode)
        )
    }

    init(
        time: Int64, type: AuditEventType, outcome: AuditEvent.Outcome, error: String?, actor: AuditEvent.Actor, subject: String?,
        client: String?, address: String?, userAgent: String?, details: String?
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
    }

    /// `details` as one JSON object, members in sorted order, absent ones left out, written
    /// by hand: it runs for every event a decision writes, and a general encoder costs
    /// more than the rest of the event (docs/PERFORMANCE.md, "The audit log").
    static func encode(_ details: AuditEvent.Details) -> String? {
        var members: [(String, String)] = []
        func add(_ name: String, _ value: String?) {
            if let value { members.append((name, "\"" + escaped(value) + "\"")) }
        }
        func add(_ name: String, _ value: (some BinaryInteger)?) {
            if let value { members.append((name, String(value))) }
        }
        func add(_ name: String, _ values: [String]?) {
            if let values { members.append((name, "[" + values.map { "\"" + escaped($0) + "\"" }.joined(separator: ",") + "]")) }
        }
        add("attestation", details.attestation)
        add("credential", details.credential)
        add("fingerprint", details.fingerprint)
        add("grantType", details.grantType)
        add("limit", details.limit)
        add("principals", details.principals)
        add("remoteHost", details.remoteHost)
        add("scope", details.scope)
        add("serial", details.serial)
        add("service", details.service)
        add("through", details.through)
        add("username", details.username)
        add("validAfter", details.validAfter)
        add("validBefore", details.validBefore)
        add("windowSeconds", details.windowSeconds)
        return "{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// A JSON string's content (RFC 8259 §7): the quote, the backslash and control
    /// characters escaped, everything else as it is.
    private static func escaped(_ value: String) -> String {
        let quote: UInt8 = 0x22, backslash: UInt8 = 0x5C
        guard value.utf8.contains(where: { $0 < 0x20 || $0 == quote || $0 == backslash }) else { return value }
        var result = [UInt8]()
        for byte in value.utf8 {
            if byte == quote || byte == backslash {
                result += [backslash, byte]
            } else if byte < 0x20 {
                let hex = Array("0123456789abcdef".utf8)
                result += [backslash, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            } else {
                result.append(byte)
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// The entry's bytes for its authentication code and its link in the chain: a version
    /// label, then each member in a fixed order, absent as one byte 0xFF, present as 0x00,
    /// its UTF-8 length (4 bytes, big-endian) and its bytes. Unambiguous without parsing:
    /// no value can pass for the next member.
    var canonical: Data {
        var data = Data("latchkey-audit-event-1".utf8)
        for member in [
            String(time), type.rawValue, outcome.rawValue, error, actor.kind.rawValue, actor.id, subject, client, address, userAgent, details,
        ] {
            guard let member else {
                data.append(0xFF)
                continue
            }
            let bytes = Data(member.utf8)
            data.append(0x00)
            withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { data.append(contentsOf: $0) }
            data.append(bytes)
        }
        return data
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
