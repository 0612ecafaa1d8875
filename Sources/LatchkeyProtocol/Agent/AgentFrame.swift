#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The framing of `latchkey agent`'s Unix socket (docs/PROTOCOL.md section 11): each
/// message is one frame, a version byte, the body's length as a 32-bit big-endian
/// integer, and the body, a JSON object naming its operation in `op`.
///
/// Bounded before anything is buffered: a header announcing an empty body, or one over
/// ``maximumBodySize``, is refused as soon as its five bytes arrive, so a peer cannot make
/// the agent hold more than one frame's worth of memory per connection.
public enum AgentFrame {
    /// The protocol version this build speaks.
    public static let version: UInt8 = 1
    /// Version byte and length.
    public static let headerSize = 5
    /// The largest body: room for a vault record's sealed metadata (a credential's kept
    /// tokens) with its JSON escaping, far below anything that costs memory.
    public static let maximumBodySize = 256 * 1024
    /// The longest operation name.
    public static let maximumOperationLength = 64

    /// `message` as one frame.
    public static func encode(_ message: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = try encoder.encode(message)
        guard !body.isEmpty, body.count <= maximumBodySize else {
            throw AgentProtocolError.frameSize(reason: "a message of \(body.count) bytes; at most \(maximumBodySize)")
        }
        let length = UInt32(body.count)
        return Data([version, UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]) + body
    }

    /// The operation a body names (`{"op": "..."}`): 1 to ``maximumOperationLength``
    /// lower-case letters, digits and hyphens. The rest of the body is the operation's to
    /// decode.
    public static func operation(of body: Data) throws -> String {
        struct Named: Decodable { var op: String }
        let named: Named
        do {
            named = try JSONDecoder().decode(Named.self, from: body)
        } catch {
            throw AgentProtocolError.malformedMessage(reason: "the message is not a JSON object with an \"op\"", underlying: error)
        }
        try validate(operation: named.op)
        return named.op
    }

    /// Refuses an operation name that is not 1 to ``maximumOperationLength`` lower-case
    /// letters, digits and hyphens.
    public static func validate(operation: String) throws {
        guard (1...maximumOperationLength).contains(operation.utf8.count),
              operation.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D })
        else {
            throw AgentProtocolError.malformedMessage(reason: "\"op\" must be 1 to \(maximumOperationLength) lower-case letters, digits or hyphens")
        }
    }
}

/// Cuts a byte stream into frame bodies, as bytes arrive in any pieces.
public struct AgentFrameReader: Sendable {
    private var buffer = Data()
    /// The announced length of the frame being read, once its header is in.
    private var expected: Int?

    public init() {}

    /// Adds bytes read from the connection. Throws as soon as a header is wrong (another
    /// version, an empty or oversized body); the connection should then be closed.
    public mutating func append(_ bytes: some DataProtocol) throws {
        buffer.append(contentsOf: bytes)
        try readHeader()
    }

    /// The next complete body, or nil until more bytes arrive.
    public mutating func next() throws -> Data? {
        try readHeader()
        guard let expected, buffer.count >= AgentFrame.headerSize + expected else { return nil }
        let start = buffer.startIndex + AgentFrame.headerSize
        let body = Data(buffer[start..<start + expected])
        buffer = Data(buffer[(start + expected)...])
        self.expected = nil
        try readHeader()
        return body
    }

    /// Called when the peer closed its side: bytes of an unfinished frame are an error.
    public func finish() throws {
        guard buffer.isEmpty else {
            throw AgentProtocolError.truncated(reason: "the connection ended \(buffer.count) bytes into a frame")
        }
    }

    private mutating func readHeader() throws {
        guard expected == nil, buffer.count >= AgentFrame.headerSize else { return }
        let header = Array(buffer.prefix(AgentFrame.headerSize))
        guard header[0] == AgentFrame.version else {
            throw AgentProtocolError.unsupportedVersion(reason: "a frame of protocol version \(header[0]); this side speaks \(AgentFrame.version)")
        }
        let length = Int(header[1]) << 24 | Int(header[2]) << 16 | Int(header[3]) << 8 | Int(header[4])
        guard (1...AgentFrame.maximumBodySize).contains(length) else {
            throw AgentProtocolError.frameSize(reason: "a frame announcing \(length) bytes; 1 to \(AgentFrame.maximumBodySize) allowed")
        }
        expected = length
    }
}
