/// Mail could not be handed on (docs/ARCHITECTURE.md, "Operations: mail"). Shaped like
/// the other Latchkey errors: an open-ended ``code``, a reason for the operator, the
/// cause kept. Reasons name the server and its reply, never a message's body or code.
public struct MailError: Error, CustomStringConvertible, Sendable {
    public var code: Code
    public var reason: String
    public var underlying: (any Error & Sendable)?

    public init(_ code: Code, _ reason: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.reason = reason
        self.underlying = underlying
    }

    public var description: String {
        var text = "MailError.\(code): \(reason)"
        if let underlying { text += " (\(underlying))" }
        return text
    }

    /// The kind of a ``MailError``. Open-ended: switch statements need a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { name }

        /// The server could not be reached or failed for now (a 4xx reply, a broken
        /// connection, TLS trouble): trying again later may work.
        public static let temporary = Code("temporary")
        /// The server refused this message for good (a 5xx reply).
        public static let rejected = Code("rejected")
        /// A mail setting that cannot be used (a URL, an address, a password in clear).
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// An address that cannot be put on the wire as it is.
        public static let invalidAddress = Code("invalidAddress")
    }
}
