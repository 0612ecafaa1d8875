#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey

/// One varlink connection from this side: `latchkey host principals`, the PAM helper and
/// `latchkey host status` ask the daemon through it. Every call has a deadline, so a
/// daemon that is gone or stuck fails the caller at once or within it, never hangs it.
public final class VarlinkClient: Sendable {
    private let socket: UnixSocket
    private let timeout: Duration

    /// Connects to `path`; fails at once when nothing listens there.
    public init(path: String, timeout: Duration = .seconds(5)) throws {
        do {
            socket = try UnixSocket.connect(path: path)
        } catch {
            throw HostError(.system, "cannot reach the host daemon at \(path); is latchkey host run running?", underlying: error)
        }
        self.timeout = timeout
    }

    /// Calls `method` and gathers its replies (with `more`, until one does not continue).
    /// A varlink error comes back as its name with no parameters.
    func call(_ method: String, parameters: some Encodable, more: Bool = false) throws -> [Result<Data, VarlinkFailure>] {
        let deadline = ContinuousClock.now + timeout
        var message = try JSONEncoder().encode(Call(method: method, parameters: parameters, more: more ? true : nil))
        message.append(0)
        try socket.write(message, deadline: deadline)
        var reader = VarlinkFrameReader()
        var replies: [Result<Data, VarlinkFailure>] = []
        while replies.count < 1_000_000 {
            guard let frame = try socket.readFrame(&reader, deadline: deadline) else {
                throw HostError(.varlink, "the daemon closed the connection before its last reply")
            }
            let reply = try JSONDecoder().decode(WireReply.self, from: frame)
            if let error = reply.error {
                replies.append(.failure(VarlinkFailure(name: error)))
                return replies
            }
            replies.append(.success(frame))
            if reply.continues != true { return replies }
        }
        throw HostError(.varlink, "the daemon's replies do not end")
    }

    private struct Call<P: Encodable>: Encodable {
        var method: String
        var parameters: P
        var more: Bool?
    }

    private struct WireReply: Decodable {
        var error: String?
        var continues: Bool?
    }

    /// A varlink error reply.
    struct VarlinkFailure: Error, Hashable {
        var name: String
    }

    private struct Envelope<P: Decodable>: Decodable {
        var parameters: P
    }

    /// The `parameters` of a reply as `type`.
    static func decode<P: Decodable>(_ type: P.Type, from frame: Data) throws -> P {
        try JSONDecoder().decode(Envelope<P>.self, from: frame).parameters
    }
}
