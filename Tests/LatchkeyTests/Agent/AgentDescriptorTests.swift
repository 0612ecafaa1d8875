import Foundation
import Glibc
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// The agent when its process runs out of file descriptors (a low `ulimit -n`, or a flood
/// of clients holding connections): a client it cannot take is closed on at once, not left
/// waiting for an answer while the accept loop spins (issue 49).
@Suite("latchkey agent: out of file descriptors")
struct AgentDescriptorTests {
    @Test("with its descriptors used up by held connections, the agent closes on the next client at once; once they are released it answers again")
    func descriptorsRunOut() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary.path), "latchkey is built with the tests")
        let prlimit = try #require(["/usr/bin/prlimit", "/bin/prlimit"].first { FileManager.default.isExecutableFile(atPath: $0) }, "prlimit (util-linux) is needed")
        let scratch = try TemporaryDirectory()
        let agent = try await RunningAgent.start(
            ["--socket", scratch.url.appendingPathComponent("agent.sock").path],
            environment: ["LATCHKEY_STORE": scratch.url.appendingPathComponent("vault").path, "LATCHKEY_PASSPHRASE": AgentCommandLineTests.passphrase],
            in: scratch, prefix: [prlimit, "--nofile=48:48", "--"]
        )
        defer { agent.stop() }
        let outcome = try await Blocking.runThrowing { () -> (answered: Int, closedOn: Int, hung: Int, answeredAfter: Bool) in
            var held: [KeyAgentTests.RawClient] = []
            var answered = 0
            var closedOn = 0
            var hung = 0
            // More clients than the agent has descriptors for, each kept open once answered.
            for _ in 0..<80 where closedOn < 3 && hung == 0 {
                let client = try KeyAgentTests.RawClient(agent.socket)
                try client.send(AgentRequest(op: .hello))
                if (try? client.reply()) != nil {
                    answered += 1
                    held.append(client)
                } else if client.isClosed() {
                    closedOn += 1
                } else {
                    hung += 1
                }
            }
            held.removeAll()
            // The held connections closed, the agent has descriptors again.
            var answeredAfter = false
            for _ in 0..<50 where !answeredAfter {
                let client = try KeyAgentTests.RawClient(agent.socket)
                try client.send(AgentRequest(op: .hello))
                answeredAfter = (try? client.reply()) != nil
                if !answeredAfter { usleep(100_000) }
            }
            return (answered, closedOn, hung, answeredAfter)
        }
        #expect(outcome.answered > 0 && outcome.answered < 48, "answered \(outcome.answered)")
        #expect(outcome.closedOn >= 1, "no client was closed on once descriptors ran out")
        #expect(outcome.hung == 0, "a client was left waiting (RawClient waits 10 s for an answer)")
        #expect(outcome.answeredAfter, "the agent answers again once descriptors are free: \(agent.logged)")
    }
}
