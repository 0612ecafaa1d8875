public import LatchkeyCrypto

/// A failure of `latchkey host` (docs/ARCHITECTURE.md, "A host's directory"), shaped like
/// the other Latchkey errors: an open-ended ``code``, a reason for the admin, the cause
/// kept. Reasons never hold a token, a key or the cache key.
public struct HostError: LatchkeyErrorTemplate, Sendable {
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

    /// The kind of a ``HostError``. Open-ended: switch statements need a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { name }

        /// The provider could not be reached, or refused the host: the cache keeps
        /// answering (within the offline limit) and the next sync tries again.
        public static let provider = Code("provider")
        /// The provider's directory broke the protocol (order, size, shape): refused whole.
        public static let malformedDirectory = Code("malformedDirectory")
        /// The cache on disk is unreadable, cut short or edited: refused, synced anew.
        public static let cache = Code("cache")
        /// A file, directory or socket of the host daemon cannot be used as asked.
        public static let system = Code("system")
        /// Another `latchkey host run` holds this state directory.
        public static let alreadyRunning = Code("alreadyRunning")
        /// A setting that cannot be used.
        public static let invalidConfiguration = Code("invalidConfiguration")
        /// A varlink peer sent something malformed or oversized, or the daemon answered so.
        public static let varlink = Code("varlink")
    }
}
