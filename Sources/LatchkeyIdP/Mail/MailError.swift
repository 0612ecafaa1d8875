public import LatchkeyCrypto

/// Mail could not be handed on (docs/ARCHITECTURE.md, "Operations: mail"). Shaped like
/// the other Latchkey errors: an open-ended ``code``, a reason for the operator, the
/// cause kept. Reasons name the server and its reply, never a message's body or code.
public struct MailError: LatchkeyErrorTemplate, Sendable {
    public var code: Code
    public var reason: String
    public var underlying: (any Error)?
    public var file: String
    public var line: UInt

    public init(_ code: Code, _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.underlying = underlying
        self.file = file
        self.line = line
    }

    /// The kind of a ``MailError``. Open-ended: switch statements need a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { name }

        /// The server could not be reached or failed for now (a 4xx reply before any
        /// recipient, a broken connection, TLS trouble): trying again later may work.
        /// Counts against the transport's health (``MailHealth``).
        public static let temporary = Code("temporary")
        /// The server refused the provider itself for good (a 5xx reply to the login or
        /// to the sender, `AUTH` or `MAIL FROM`): a setting to fix. Counts against the
        /// transport's health.
        public static let rejected = Code("rejected")
        /// The server put off this one recipient or message (a 4xx reply to `RCPT TO` or
        /// to the message, as Postfix answers 450 for an address it has not verified yet):
        /// retried later, and says nothing about the server.
        public static let recipientDeferred = Code("recipientDeferred")
        /// The server refused this one recipient or message for good (a 5xx reply to
        /// `RCPT TO` or to the message, a sendmail exit for an unknown user or host).
        /// Says nothing about the server.
        public static let recipientRefused = Code("recipientRefused")
        /// A mail setting that cannot be used (a URL, an address, a password in clear).
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// An address that cannot be put on the wire as it is.
        public static let invalidAddress = Code("invalidAddress")
    }

    /// Whether this failure says the transport itself is failing (it could not connect,
    /// log in, secure the connection or send), rather than that one recipient or message
    /// was refused: only such failures count against ``MailHealth``, since anyone may
    /// start a sign-up for an address a relay refuses.
    var concernsTransport: Bool {
        code != .recipientDeferred && code != .recipientRefused && code != .invalidAddress
    }

    /// Whether trying the same message again cannot help.
    var isFinal: Bool {
        code == .rejected || code == .recipientRefused || code == .invalidAddress
    }
}
