#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// One decision of the provider, as the admin API (`GET /admin/events`) and
/// `latchkey admin events --json` show it (docs/PROTOCOL.md, "Audit log"). Never holds
/// a token, a code, a passphrase, an assertion, a key or a mail's body: identifiers and
/// outcomes only.
public struct AuditEvent: Codable, Hashable, Sendable {
    /// The event's place in the provider's chain: 1, 2, 3, … with no gaps, oldest first.
    public var id: Int64
    /// When the provider decided, to the millisecond; RFC 3339 in JSON.
    public var time: Date
    public var type: AuditEventType
    public var outcome: Outcome
    /// The error code of a refusal (docs/PROTOCOL.md, "Errors").
    public var error: String?
    /// Who asked.
    public var actor: Actor
    /// The identity acted on.
    public var subject: String?
    /// The OAuth client involved.
    public var client: String?
    /// The requester's address, as the provider saw it (behind a trusted proxy, the
    /// address it forwarded).
    public var address: String?
    /// The requester's `User-Agent`, at most ``maximumUserAgentLength`` characters, control
    /// and bidi characters escaped.
    public var userAgent: String?
    /// What else this type of event says.
    public var details: Details?
    /// The chain's hash after this event (SHA-256, base64url): what a checkpoint signs.
    public var hash: String?

    /// The longest `User-Agent` kept, in characters.
    public static let maximumUserAgentLength = 256

    public init(
        id: Int64, time: Date, type: AuditEventType, outcome: Outcome, error: String? = nil, actor: Actor, subject: String? = nil,
        client: String? = nil, address: String? = nil, userAgent: String? = nil, details: Details? = nil, hash: String? = nil
    ) {
        self.id = id
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
        self.hash = hash
    }

    /// Whether the decision let the request through.
    public enum Outcome: String, Codable, Hashable, Sendable {
        case success
        case failure
    }

    /// Who made the request an event records.
    public struct Actor: Codable, Hashable, Sendable {
        public var kind: Kind
        /// The identity's or client's id; none for the admin and for anonymous requests.
        public var id: String?

        public init(kind: Kind, id: String? = nil) {
            self.kind = kind
            self.id = id
        }

        public enum Kind: String, Codable, Hashable, Sendable {
            /// A person, by identity id.
            case identity
            /// An OAuth client, by client id.
            case client
            /// The holder of the admin token.
            case admin
            /// Someone not (yet) known.
            case anonymous
            /// The provider itself, on its own schedule (retention).
            case provider
        }

        public static let admin = Actor(kind: .admin)
        public static let anonymous = Actor(kind: .anonymous)
        public static let provider = Actor(kind: .provider)
        public static func identity(_ id: String) -> Actor { Actor(kind: .identity, id: id) }
        public static func client(_ id: String) -> Actor { Actor(kind: .client, id: id) }
    }

    /// The members an event's type adds, each named where it is used; all optional so a
    /// type sets only its own.
    public struct Details: Codable, Hashable, Sendable {
        /// The credential involved (base64url id): sign-ins, registrations, revocations.
        public var credential: String?
        /// `token.issued`: the grant type (RFC 6749 §4, RFC 8628, RFC 7523).
        public var grantType: String?
        /// The scope granted.
        public var scope: String?
        /// `identity.created`, `signup.completed`: the username.
        public var username: String?
        /// `ratelimit.engaged`: which limit (`admin-token`, `requests`).
        public var limit: String?
        /// `ratelimit.engaged`, `admin.token.refused`: how long the window lasts, seconds.
        public var windowSeconds: Int?
        /// `audit.pruned`: the checkpoint the kept chain starts from.
        public var through: Int64?
        /// `attestation.certified`: the certificate's serial (hex); `ssh.certificate.issued`:
        /// the certificate's serial (decimal).
        public var serial: String?
        /// `ssh.certificate.issued`: the certified key's fingerprint (`SHA256:…`).
        public var fingerprint: String?
        /// `ssh.certificate.issued`: the certificate's principals.
        public var principals: [String]?
        /// `ssh.certificate.issued`: the validity window (RFC 3339).
        public var validAfter: String?
        public var validBefore: String?
        /// `ssh.certificate.issued`: how the key proved where it lives (`tpm`), when it did.
        public var attestation: String?
        /// `pam.approved`, `pam.denied`: the PAM service (`sshd`, `sudo`) and the remote
        /// address it named.
        public var service: String?
        public var remoteHost: String?
        /// `posix.changed`, `group.changed`, `host.access.changed`: what was done (`set`,
        /// `unset`, `renamed`, `created`, `deleted`, `member.added`, `member.removed`,
        /// `labels.set`, `granted`, `revoked`).
        public var change: String?
        /// `posix.changed`: the account's `uid` (its private group's `gid` too).
        public var uid: Int64?
        /// `group.changed`, `host.access.changed`: the group and its `gid`.
        public var group: String?
        public var gid: Int64?
        /// `host.access.changed`: the host label granted or revoked, or a host's labels now.
        public var labels: [String]?
        /// `host.access.changed`: whether the grant includes `sudo`.
        public var sudo: Bool?
        /// `consent.*`: the resource (RFC 8707) the tokens are for.
        public var resource: String?

        public init(
            credential: String? = nil, grantType: String? = nil, scope: String? = nil, username: String? = nil, limit: String? = nil,
            windowSeconds: Int? = nil, through: Int64? = nil, serial: String? = nil, fingerprint: String? = nil, principals: [String]? = nil,
            validAfter: String? = nil, validBefore: String? = nil, attestation: String? = nil, service: String? = nil, remoteHost: String? = nil,
            change: String? = nil, uid: Int64? = nil, group: String? = nil, gid: Int64? = nil, labels: [String]? = nil, sudo: Bool? = nil,
            resource: String? = nil
        ) {
            self.resource = resource
            self.change = change
            self.uid = uid
            self.group = group
            self.gid = gid
            self.labels = labels
            self.sudo = sudo
            self.credential = credential
            self.grantType = grantType
            self.scope = scope
            self.username = username
            self.limit = limit
            self.windowSeconds = windowSeconds
            self.through = through
            self.serial = serial
            self.fingerprint = fingerprint
            self.principals = principals
            self.validAfter = validAfter
            self.validBefore = validBefore
            self.attestation = attestation
            self.service = service
            self.remoteHost = remoteHost
        }
    }

    enum CodingKeys: String, CodingKey {
        case id, time, type, outcome, error, actor, subject, client, address, userAgent, details, hash
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        let text = try container.decode(String.self, forKey: .time)
        guard let time = Self.parseTime(text) else {
            throw DecodingError.dataCorruptedError(forKey: .time, in: container, debugDescription: "time is not an RFC 3339 date-time")
        }
        self.time = time
        type = try container.decode(AuditEventType.self, forKey: .type)
        outcome = try container.decode(Outcome.self, forKey: .outcome)
        error = try container.decodeIfPresent(String.self, forKey: .error)
        actor = try container.decode(Actor.self, forKey: .actor)
        subject = try container.decodeIfPresent(String.self, forKey: .subject)
        client = try container.decodeIfPresent(String.self, forKey: .client)
        address = try container.decodeIfPresent(String.self, forKey: .address)
        userAgent = try container.decodeIfPresent(String.self, forKey: .userAgent)
        details = try container.decodeIfPresent(Details.self, forKey: .details)
        hash = try container.decodeIfPresent(String.self, forKey: .hash)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(Self.formatTime(time), forKey: .time)
        try container.encode(type, forKey: .type)
        try container.encode(outcome, forKey: .outcome)
        try container.encodeIfPresent(error, forKey: .error)
        try container.encode(actor, forKey: .actor)
        try container.encodeIfPresent(subject, forKey: .subject)
        try container.encodeIfPresent(client, forKey: .client)
        try container.encodeIfPresent(address, forKey: .address)
        try container.encodeIfPresent(userAgent, forKey: .userAgent)
        try container.encodeIfPresent(details, forKey: .details)
        try container.encodeIfPresent(hash, forKey: .hash)
    }

    /// RFC 3339 in UTC with milliseconds (`2026-11-27T07:30:00.123Z`).
    public static func formatTime(_ time: Date) -> String {
        Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(time)
    }

    /// The time `text` names in RFC 3339 (with or without fractional seconds); nil for
    /// anything else, or over 40 bytes.
    public static func parseTime(_ text: String) -> Date? {
        guard text.utf8.count <= 40 else { return nil }
        if let time = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return time }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}
