#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyProtocol

/// Frames of the ssh-agent protocol (RFC 9987 §3; draft-miller-ssh-agent): a `uint32`
/// length, then that many bytes, the first of which is the message type. A length of
/// zero or past ``maximumLength`` (OpenSSH's own limit, 256 KiB) is refused from the
/// header alone, before anything is buffered.
struct SSHAgentFrameReader: StreamFrameReader {
    static let maximumLength = 256 * 1024
    private var buffer = Data()

    mutating func append(_ bytes: some DataProtocol) throws {
        buffer.append(contentsOf: bytes)
        _ = try announcedLength()
    }

    /// The announced length, once its four bytes are in; a length out of bounds throws.
    private func announcedLength() throws -> Int? {
        guard buffer.count >= 4 else { return nil }
        let length = buffer.prefix(4).reduce(0) { $0 << 8 | Int($1) }
        guard length > 0, length <= Self.maximumLength else {
            throw AgentProtocolError.frameSize(reason: "an ssh-agent message of \(length) bytes (1 to \(Self.maximumLength))")
        }
        return length
    }

    mutating func next() throws -> Data? {
        guard let length = try announcedLength(), buffer.count >= 4 + length else { return nil }
        let start = buffer.startIndex + 4
        let body = Data(buffer[start..<start + length])
        buffer = Data(buffer[(start + length)...])
        return body
    }

    func finish() throws {
        guard buffer.isEmpty else { throw AgentProtocolError.truncated(reason: "the connection ended \(buffer.count) bytes into a message") }
    }
}
