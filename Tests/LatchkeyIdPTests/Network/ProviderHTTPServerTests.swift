import Foundation
@testable import LatchkeyIdP
import LatchkeyTestSupport
import Logging
import Testing

/// The provider's own HTTP/1.1 listener (``ProviderHTTPServer``, ``HTTPConnectionHandler``):
/// what Hummingbird's server did for the provider, it must still do.
@Suite("Provider: the HTTP/1.1 listener")
struct ProviderHTTPServerTests {
    static func withProvider(
        _ configure: (inout ProviderConfiguration) -> Void = { _ in }, _ body: @escaping @Sendable (_ port: Int) async throws -> Void
    ) async throws {
        var configuration = ProviderConfiguration(adminToken: "admin-token-for-the-listener-tests")
        configuration.logLevel = .critical
        configure(&configuration)
        try await withReferenceProvider(configuration: configuration) { issuer in
            try await body(try #require(issuer.port))
        }
    }

    /// A kept-alive request, and a last one that asks to close (and is not found).
    static let health = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    static let lastNotFound = "GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"

    /// Each answer's status line, in order (an answer's body runs into the next status
    /// line, with no line break between them).
    static func statusLines(_ text: String) -> [String] {
        text.matches(of: /HTTP\/1\.1 \d{3} [^\r]*/).map { String($0.output) }
    }

    @Test("pipelined requests on one connection are answered in order, each with Date, Server and its own X-Request-Id; Connection: close ends it after its answer")
    func pipelined() async throws {
        try await Self.withProvider { port in
            let connection = try await RawConnection.open(port: port)
            #expect(connection.send(String(repeating: Self.health, count: 3) + Self.lastNotFound))
            let (text, closed) = await connection.received(within: 10)
            #expect(closed, "the connection stays open after Connection: close")
            #expect(Self.statusLines(text) == ["HTTP/1.1 200 OK", "HTTP/1.1 200 OK", "HTTP/1.1 200 OK", "HTTP/1.1 404 Not Found"], "\(text)")
            let lines = text.components(separatedBy: "\r\n")
            let ids = Set(lines.filter { $0.lowercased().hasPrefix("x-request-id: ") })
            #expect(ids.count == 4, "\(ids)")
            #expect(lines.filter { $0.lowercased() == "server: latchkey" }.count == 4)
            let dates = lines.filter { $0.lowercased().hasPrefix("date: ") }
            #expect(dates.count == 4)
            #expect(dates.allSatisfy { $0.range(of: #"^[Dd]ate: (Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT$"#, options: .regularExpression) != nil }, "\(dates)")
        }
    }

    @Test("a flood of 2,000 pipelined requests in one write is answered in order on that connection, while another connection is answered at once; the last, with Connection: close, says so and ends it")
    func pipelinedFlood() async throws {
        try await Self.withProvider { port in
            let flood = try await RawConnection.open(port: port)
            #expect(flood.send(String(repeating: Self.health, count: 2000) + Self.lastNotFound))
            // The flooded connection reads no more than one read's worth ahead of its
            // answers, so others are not starved.
            let other = try await RawConnection.open(port: port)
            #expect(other.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"))
            #expect(await other.outcome(within: 10) == .status(200))
            let (text, closed) = await flood.received(within: 60)
            #expect(closed, "the flooded connection stays open after Connection: close")
            let lines = Self.statusLines(text)
            #expect(lines.count == 2001)
            #expect(lines.dropLast().allSatisfy { $0 == "HTTP/1.1 200 OK" })
            #expect(lines.last == "HTTP/1.1 404 Not Found")
            let tail = try #require(text.range(of: "HTTP/1.1 404 Not Found"))
            #expect(text[tail.upperBound...].lowercased().contains("\r\nconnection: close\r\n"), "the last answer does not say the connection closes")
        }
    }

    @Test("an answer to HEAD carries the length a GET would have and no body, so the next pipelined answer follows its head at once")
    func headHasNoBody() async throws {
        try await Self.withProvider { port in
            let connection = try await RawConnection.open(port: port)
            #expect(connection.send("HEAD /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"))
            let (text, closed) = await connection.received(within: 10)
            #expect(closed)
            let answers = text.components(separatedBy: "\r\n\r\n")
            #expect(answers.count == 3, "\(text)")
            let first = try #require(answers.first)
            #expect(first.hasPrefix("HTTP/1.1 "), "\(text)")
            #expect(first.lowercased().contains("\r\ncontent-length: "), "\(text)")
            #expect(answers.dropFirst().first?.hasPrefix("HTTP/1.1 200 OK") == true, "the answer to HEAD carried a body: \(text)")
        }
    }

    @Test("a body over 64 KiB is answered 413 without waiting for the rest, then the connection closes; a request that does not parse gets 400 and a close")
    func refusals() async throws {
        try await Self.withProvider { port in
            let large = try await RawConnection.open(port: port)
            #expect(large.send("POST /token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 10000000\r\n\r\n" + String(repeating: "a", count: 70_000)))
            let (answer, closed) = await large.received(within: 10)
            #expect(Self.statusLines(answer) == ["HTTP/1.1 413 Content Too Large"], "\(answer.prefix(300))")
            #expect(closed)

            let garbage = try await RawConnection.open(port: port)
            #expect(garbage.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header Line\r\n\r\n"))
            let (refused, ended) = await garbage.received(within: 10)
            #expect(Self.statusLines(refused) == ["HTTP/1.1 400 Bad Request"], "\(refused)")
            #expect(ended)
        }
    }

    @Test("a body answered 413 that keeps arriving is read and dropped only until its deadline, then the connection closes")
    func oversizedBodyCutOff() async throws {
        // A deadline of 3 s: time enough on a loaded machine to read the first 64 KiB (a
        // body still short of it at its deadline would be answered 408 instead), short
        // beside the 40 s bound below. A deadline that passes while the 413 is being made
        // gives one more deadline after it is written, so the end comes within 6 s.
        try await Self.withProvider({ $0.bodyTimeout = 3 }) { port in
            let connection = try await RawConnection.open(port: port)
            #expect(connection.send("POST /token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000000\r\n\r\n" + String(repeating: "a", count: 70_000)))
            #expect(await connection.outcome(within: 30) == .status(413))
            // Keep sending, as a hostile client would, for up to 40 s: the server must end it.
            let clock = ContinuousClock()
            let started = clock.now
            var open = true
            while open, clock.now - started < .seconds(40) {
                open = connection.send(String(repeating: "a", count: 4096))
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(!open, "the server was still reading a refused body 40 s after its 3 s deadline")
        }
    }

    @Test("a client that closes its side after sending still gets its answer")
    func halfClosed() async throws {
        try await Self.withProvider { port in
            let connection = try await RawConnection.open(port: port)
            #expect(connection.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
            connection.closeSending()
            let (text, closed) = await connection.received(within: 10)
            #expect(Self.statusLines(text) == ["HTTP/1.1 200 OK"], "\(text)")
            #expect(closed)
        }
    }

    @Test("stopping the provider closes an idle kept-alive connection at once rather than at its idle timeout")
    func gracefulShutdown() async throws {
        let clock = ContinuousClock()
        let holder = ConnectionHolder()
        // An idle timeout far beyond the bound below: a stop that waited for it would
        // show, while a loaded machine's slow stop (seconds) would not fail the test.
        try await Self.withProvider({ $0.idleTimeout = 600 }) { port in
            let connection = try await RawConnection.open(port: port)
            #expect(connection.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
            #expect(await connection.outcome(within: 10) == .status(200))
            holder.connection = connection
            holder.stopping = clock.now
        }
        let elapsed = clock.now - (try #require(holder.stopping))
        #expect(elapsed < .seconds(120), "stopping took \(elapsed) with an idle connection open (idle timeout 600 s)")
        let (_, closed) = try await #require(holder.connection).received(within: 5)
        #expect(closed, "the kept-alive connection is still open after the provider stopped")
    }
}

private final class ConnectionHolder: @unchecked Sendable {
    var connection: RawConnection?
    var stopping: ContinuousClock.Instant?
}
