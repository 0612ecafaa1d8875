import LatchkeyOAuth

extension AdminAPI {
    /// The query parameters of ``events``: events `after` an id (the cursor), at most
    /// `limit` (1…``EventQuery/maximumLimit``, default 100), only of `type`, only about
    /// `subject`, only since a time (RFC 3339). Oldest first, newest last.
    public enum EventQuery {
        public static let after = "after"
        public static let limit = "limit"
        public static let type = "type"
        public static let subject = "subject"
        public static let since = "since"
        /// `GET /admin/events/verify?expect=ID:HASH`: a head kept outside the store
        /// (``AuditHeadMark``) the log must still run through.
        public static let expect = "expect"
        /// The largest page.
        public static let maximumLimit = 1000
    }

    /// `GET /admin/events`: a page of the audit log.
    public struct EventPage: Codable, Hashable, Sendable {
        public var events: [AuditEvent]
        /// The cursor for the next page (the last event's id); absent when this page
        /// reached the newest event.
        public var next: Int64?

        public init(events: [AuditEvent], next: Int64? = nil) {
            self.events = events
            self.next = next
        }
    }

    /// `GET /admin/events/verify`: whether the chain holds (docs/PROTOCOL.md, "Audit log").
    public struct EventVerification: Codable, Hashable, Sendable {
        /// True when every event from the anchor on is there, unaltered and in order, and
        /// every checkpoint's signature and hash hold.
        public var intact: Bool
        /// How many events were checked.
        public var checked: Int64
        /// The id the kept chain starts after (0, or the checkpoint retention pruned to).
        public var anchor: Int64
        /// The newest id checked.
        public var newest: Int64
        /// The id of the first event found altered, removed, inserted or out of order.
        public var firstBroken: Int64?
        /// What is wrong there, in words.
        public var problem: String?
        /// The checkpoints whose signatures were checked.
        public var checkpoints: Int
        /// The newest event checked and its link, `ID:HASH` (``AuditHeadMark``): keep it
        /// outside the store and pass it back as `expect`, so that a log cut back or put
        /// back to an older copy fails. Absent when the log is not intact.
        public var head: String?

        public init(
            intact: Bool, checked: Int64, anchor: Int64, newest: Int64, firstBroken: Int64? = nil, problem: String? = nil, checkpoints: Int,
            head: String? = nil
        ) {
            self.intact = intact
            self.checked = checked
            self.anchor = anchor
            self.newest = newest
            self.firstBroken = firstBroken
            self.problem = problem
            self.checkpoints = checkpoints
            self.head = head
        }
    }

    /// A signed checkpoint (`GET /admin/events/checkpoints`): ship these elsewhere, and a
    /// rewrite of the history before them shows even to someone holding the store key.
    public struct EventCheckpoint: Codable, Hashable, Sendable {
        /// The id of the last event it covers.
        public var id: Int64
        /// The chain's hash after that event (base64url).
        public var hash: String
        /// A compact JWS (ES256) by the provider's audit key over `{"iss", "id", "hash",
        /// "iat"}`.
        public var signature: String

        public init(id: Int64, hash: String, signature: String) {
            self.id = id
            self.hash = hash
            self.signature = signature
        }
    }

    /// `GET /admin/events/checkpoints`.
    public struct EventCheckpoints: Codable, Hashable, Sendable {
        public var checkpoints: [EventCheckpoint]
        /// The audit key's public JWK (RFC 7517), to check the signatures with.
        public var key: String

        public init(checkpoints: [EventCheckpoint], key: String) {
            self.checkpoints = checkpoints
            self.key = key
        }
    }

    public static let events = Endpoint<Empty, EventPage>(HTTPMethod.get, "admin/events")
    public static let verifyEvents = Endpoint<Empty, EventVerification>(HTTPMethod.get, "admin/events/verify")
    public static let eventCheckpoints = Endpoint<Empty, EventCheckpoints>(HTTPMethod.get, "admin/events/checkpoints")
}
