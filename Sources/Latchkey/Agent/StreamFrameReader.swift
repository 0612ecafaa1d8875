#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif
import LatchkeyProtocol

/// Cuts the bytes of a stream into frames, for ``UnixSocket/readFrame(_:deadline:)``: the
/// agent's own protocol (``AgentFrameReader``) and the ssh-agent protocol
/// (``SSHAgentFrameReader``) on its second socket.
package protocol StreamFrameReader {
    /// Adds bytes read; throws as soon as a header is wrong.
    mutating func append(_ bytes: some DataProtocol) throws
    /// The next complete frame body, or nil until more bytes arrive.
    mutating func next() throws -> Data?
    /// The peer closed its side: bytes of an unfinished frame are an error.
    func finish() throws
}

extension AgentFrameReader: StreamFrameReader {}
