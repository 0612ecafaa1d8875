public import LatchkeyCrypto

/// The in-process reference provider (`withReferenceProvider`) could not be run. Shaped
/// like every Latchkey error (`LatchkeyErrorTemplate`); a server that fails with an error
/// of its own (a port in use) throws that error itself, not this one.
public struct ReferenceProviderError: LatchkeyErrorTemplate, Sendable {
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

    /// The kind of a ``ReferenceProviderError``. Open-ended: switch statements need a
    /// `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String

        private init(_ name: String) {
            self.name = name
        }

        public var description: String { name }

        /// The server ended without an error before it listened.
        public static let stoppedBeforeListening = Code("stoppedBeforeListening")
        /// A setting the provider cannot start with (a POSIX ID range over the system's).
        public static let invalidConfiguration = Code("invalidConfiguration")
    }
}
