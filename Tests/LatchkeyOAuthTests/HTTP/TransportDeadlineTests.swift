import Foundation
@testable import LatchkeyOAuth
import Testing

/// ``HTTP1Transport`` keeps its own deadline and its own cancellation: a provider
/// cannot hold a caller past ``TransportPolicy/timeout`` by answering slowly, and a
/// cancelled caller is released at once, whenever the cancellation lands (a slow
/// provider stalls the client; FoundationNetworking enforces neither on Linux).
@Suite("HTTP transport deadlines and cancellation")
struct TransportDeadlineTests {
    @Test("a provider dripping one byte every 300 ms is cut off at the deadline with timedOut")
    func drip() async throws {
        try await TestServer.with(try TestProvider()) { issuer in
            var policy = TransportPolicy()
            policy.timeout = 2
            let started = ContinuousClock.now
            do {
                _ = try await HTTP1Transport(policy: policy).send(TransportRequest(method: "GET", url: issuer.appendingPathComponent("drip")))
                Issue.record("a response dripped over 15 s was accepted under a 2 s deadline")
            } catch let error as OAuthError {
                #expect(error.code == .timedOut, "\(error)")
            }
            let waited = ContinuousClock.now - started
            #expect(waited < .seconds(8), "the caller waited \(waited) under a 2 s deadline")
        }
    }

    @Test("a request cancelled at any moment, before or after it is sent, ends with CancellationError")
    func cancellation() async throws {
        try await TestServer.with(try TestProvider()) { issuer in
            let transport = HTTP1Transport()
            let url = issuer.appendingPathComponent("slow")
            let outcomes = Outcomes()
            let count = 40
            for index in 0..<count {
                let request = Task {
                    try await transport.send(TransportRequest(method: "GET", url: url))
                }
                // From "before the transfer exists" to "while the provider thinks".
                try await Task.sleep(for: .microseconds(index * 250))
                request.cancel()
                Task {
                    do {
                        _ = try await request.value
                        await outcomes.add("answered")
                    } catch is CancellationError {
                        await outcomes.add("cancelled")
                    } catch {
                        await outcomes.add("\(error)")
                    }
                }
            }
            // Unstructured waits, so a caller that is never released fails this test
            // instead of hanging the run.
            let deadline = ContinuousClock.now + .seconds(20)
            while await outcomes.all.count < count, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            let all = await outcomes.all
            #expect(all.count == count, "\(count - all.count) cancelled requests were never released")
            #expect(all.allSatisfy { $0 == "cancelled" }, "\(all.filter { $0 != "cancelled" })")
        }
    }

    actor Outcomes {
        var all: [String] = []
        func add(_ outcome: String) { all.append(outcome) }
    }
}
