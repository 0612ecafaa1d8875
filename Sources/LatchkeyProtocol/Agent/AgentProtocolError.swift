public import LatchkeyCrypto

/// A message on the agent's socket that breaks its framing (docs/PROTOCOL.md section 11):
/// the connection that sent it is answered with this and closed.
public struct AgentProtocolError: LatchkeyErrorTemplate, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A frame of a protocol version this side does not speak.
        public static let unsupportedVersion = Code("unsupportedVersion")
        /// A frame announcing an empty body or one over ``AgentFrame/maximumBodySize``.
        public static let frameSize = Code("frameSize")
        /// The connection ended inside a frame.
        public static let truncated = Code("truncated")
        /// A body that is not a JSON object with a valid `op`.
        public static let malformedMessage = Code("malformedMessage")
    }

    public let code: Code
    public let reason: String
    public let underlying: (any Error)?
    public let file: String
    public let line: UInt

    init(code: Code, reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.underlying = underlying
        self.file = file
        self.line = line
    }
}

extension AgentProtocolError {
    public static func unsupportedVersion(reason: String, file: String = #fileID, line: UInt = #line) -> AgentProtocolError {
        AgentProtocolError(code: .unsupportedVersion, reason: reason, file: file, line: line)
    }

    public static func frameSize(reason: String, file: String = #fileID, line: UInt = #line) -> AgentProtocolError {
        AgentProtocolError(code: .frameSize, reason: reason, file: file, line: line)
    }

    public static func truncated(reason: String, file: String = #fileID, line: UInt = #line) -> AgentProtocolError {
        AgentProtocolError(code: .truncated, reason: reason, file: file, line: line)
    }

    public static func malformedMessage(reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line) -> AgentProtocolError {
        AgentProtocolError(code: .malformedMessage, reason: reason, underlying: underlying, file: file, line: line)
    }
}
