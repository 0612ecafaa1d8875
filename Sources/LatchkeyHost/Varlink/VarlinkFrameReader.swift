#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey

/// Cuts a varlink stream into messages: each is one JSON object followed by a NUL byte
/// (varlink.org, "Protocol"). A message over ``maximumMessage`` bytes is refused before
/// it is all read, so a peer cannot make the daemon hold more than that per connection.
struct VarlinkFrameReader: StreamFrameReader {
    /// User and group lookups are a few hundred bytes; systemd's own limit is far larger,
    /// but nothing this daemon answers needs a bigger call.
    static let maximumMessage = 64 * 1024

    private var buffer: [UInt8] = []
    private var start = 0

    mutating func append(_ bytes: some DataProtocol) throws {
        // What was handed out already goes first, so the buffer never holds more than one
        // unfinished message and the bytes of this read, however a peer splits its calls.
        if start > 0 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
        if buffer.firstIndex(of: 0) == nil, buffer.count > Self.maximumMessage {
            throw HostError(.varlink, "a varlink message is over \(Self.maximumMessage) bytes")
        }
    }

    mutating func next() throws -> Data? {
        guard let end = buffer[start...].firstIndex(of: 0) else { return nil }
        guard end - start <= Self.maximumMessage else { throw HostError(.varlink, "a varlink message is over \(Self.maximumMessage) bytes") }
        let message = Data(buffer[start..<end])
        start = end + 1
        return message
    }

    func finish() throws {
        guard start == buffer.count else { throw HostError(.varlink, "the peer closed the connection inside a message") }
    }
}
