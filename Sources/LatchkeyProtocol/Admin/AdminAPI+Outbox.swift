extension AdminAPI {
    /// A message the provider would e-mail, as `GET /admin/outbox` shows it.
    public struct OutboxMessage: Codable, Hashable, Sendable {
        public var to: String
        public var subject: String
        public var body: String
        public var code: String?
        /// RFC 3339, UTC.
        public var createdAt: String

        public init(to: String, subject: String, body: String, code: String?, createdAt: String) {
            self.to = to
            self.subject = subject
            self.body = body
            self.code = code
            self.createdAt = createdAt
        }
    }

    /// `GET /admin/outbox`.
    public struct Outbox: Codable, Hashable, Sendable {
        public var messages: [OutboxMessage]

        public init(messages: [OutboxMessage]) {
            self.messages = messages
        }
    }
}
