import Foundation
import Latchkey
@testable import LatchkeyHost
import LatchkeyTestSupport
import Logging
import Testing

/// The limits ``VarlinkServer`` puts on one peer's connection (docs/PROTOCOL.md section 15):
/// a peer that pipelines calls without end, or that connects and says nothing, cannot hold
/// a connection, and with it a thread, for longer than the limits allow.
@Suite("latchkey host: the varlink server's per-connection limits")
struct VarlinkServerTests {
    /// A server on a socket in `scratch` that answers every call with one empty reply.
    static func server(_ scratch: TemporaryDirectory) throws -> VarlinkServer {
        let listener = try UnixSocketListener.bind(path: scratch.url.appendingPathComponent("limits.socket").path)
        let server = VarlinkServer(listener: listener, logger: Logger(label: "varlink-limits-test")) { call, _, reply in
            try reply(VarlinkReply.failure(VarlinkReply.methodNotFound, ["method": call.method]))
        }
        try server.start()
        return server
    }

    @Test("a connection gets at most 4,096 calls answered, then the server closes it; a new connection is served again")
    func callCap() throws {
        let scratch = try TemporaryDirectory()
        let server = try Self.server(scratch)
        defer { server.stop() }
        let connection = try UnixSocket.connect(path: server.path)
        let calls = VarlinkServer.maximumCallsPerConnection + 10
        let call = Data("{\"method\":\"io.example.Ping\"}\0".utf8)
        // Written in batches, each read back before the next, so neither side's buffer fills.
        var answered = 0
        var reader = VarlinkFrameReader()
        calling: for first in stride(from: 0, to: calls, by: 256) {
            let batch = min(256, calls - first)
            // Past the cap the server has closed its end: a write may fail, a read ends.
            guard (try? connection.write(Data(Array(repeating: call, count: batch).joined()), deadline: .now + .seconds(10))) != nil else { break }
            for _ in 0..<batch {
                guard (try? connection.readFrame(&reader, deadline: .now + .seconds(10))) != nil else { break calling }
                answered += 1
            }
        }
        #expect(answered == VarlinkServer.maximumCallsPerConnection)
        let again = try UnixSocket.connect(path: server.path)
        try again.write(call, deadline: .now + .seconds(5))
        var fresh = VarlinkFrameReader()
        #expect(try again.readFrame(&fresh, deadline: .now + .seconds(5)) != nil)
    }

    @Test("a peer that connects and says nothing is closed after the idle limit (5 s), not kept")
    func idleTimeout() throws {
        let scratch = try TemporaryDirectory()
        let server = try Self.server(scratch)
        defer { server.stop() }
        let connection = try UnixSocket.connect(path: server.path)
        let start = ContinuousClock.now
        var reader = VarlinkFrameReader()
        // The server's end: an orderly close (nil), well within twice the limit.
        #expect(try connection.readFrame(&reader, deadline: .now + .seconds(15)) == nil)
        let waited = ContinuousClock.now - start
        #expect(waited >= VarlinkServer.idleTimeout - .milliseconds(100) && waited < VarlinkServer.idleTimeout * 2, "\(waited)")
    }
}
