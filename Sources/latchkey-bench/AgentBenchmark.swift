import Foundation
import Latchkey
import LatchkeyCrypto
import LatchkeyProtocol
import LatchkeyIdP
import LatchkeyOAuth
import Logging
import LatchkeyTestSupport

/// `latchkey agent` (issue 36), against references measured in the same run:
/// - `latchkey token` answered from kept tokens, through an agent, next to the same command
///   opening its passphrase vault itself (scrypt, ~0.4 s by design) and next to a bare
///   `latchkey --version` process; medians of alternating runs;
/// - a full in-process sign-in (`Embedded.authenticate`) through an agent next to one over
///   the vault opened in the process: the agent's extra cost per sign-in.
struct AgentBenchmark {
    var seconds: Double
    static let passphrase = "benchmark agent vault passphrase"

    func run() async throws -> Report {
        try await ProviderBenchmark.withProvider { issuer, scratch, root in
            var report = Report(title: "Agent: unlock once (latchkey agent)")
            report.notes = ["vaults on \(root); process figures are medians of alternating runs; targets: token via agent <= 0.05x direct and <= 3x a bare process start; agent sign-in extra <= 1 ms"]
            try await processes(issuer: issuer, scratch: scratch, into: &report)
            try await signIns(issuer: issuer, scratch: scratch, into: &report)
            return report
        }
    }

    /// Wall time of `latchkey arguments…` to its end, in seconds: spawned and reaped by
    /// ``SpawnedProcess`` (posix_spawn, waitid), since Foundation's `waitUntilExit` notices
    /// an exit only on its run loop's next turn (tens of milliseconds, more than the command).
    static func timed(_ arguments: [String], _ environment: [String: String]) throws -> Double {
        var merged = ProcessInfo.processInfo.environment
        for name in ["LATCHKEY_PASSPHRASE", "LATCHKEY_AGENT_SOCK", "LATCHKEY_STORE"] { merged.removeValue(forKey: name) }
        merged.merge(environment) { $1 }
        let start = ContinuousClock.now
        let process = try SpawnedProcess(ServeProcess.clientBinary, arguments, environment: merged)
        process.waitUntilExit()
        let elapsed = ContinuousClock.now - start
        guard process.terminationStatus == 0 else {
            throw BenchmarkError("latchkey \(arguments.first ?? "") exited with status \(process.terminationStatus ?? -1)")
        }
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// A `latchkey agent` process serving at `socket`, once it listens (its first line).
    static func startAgent(socket: String, environment: [String: String]) throws -> SpawnedProcess {
        let output = Pipe()
        let agent = try SpawnedProcess(
            ServeProcess.clientBinary, ["agent", "--socket", socket], environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
            stdout: .pipe(output)
        )
        _ = PipeReading.chunk(output.fileHandleForReading)  // the LATCHKEY_AGENT_SOCK line: it listens
        return agent
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    private func processes(issuer: URL, scratch: URL, into report: inout Report) async throws {
        let store = scratch.appendingPathComponent("agent-vault").path
        let direct = ["LATCHKEY_STORE": store, "LATCHKEY_PASSPHRASE": Self.passphrase]
        let admin = AdminAPIClient(issuer: issuer, token: ServeProcess.adminToken, transport: HTTP1Transport())
        let created = try await admin.call(AdminAPI.createIdentity, body: AdminAPI.IdentityCreation(username: "agent-bench"))
        guard let bindURL = created.answer?.bindURL else { throw BenchmarkError("no bind URL") }
        _ = try Self.timed(["bind", bindURL], direct)
        _ = try Self.timed(["authenticate", "--issuer", issuer.absoluteString], direct)

        let socket = scratch.appendingPathComponent("agent.sock").path
        let agent = try Self.startAgent(socket: socket, environment: direct)
        defer { agent.terminate(); agent.waitUntilExit() }
        let throughAgent = ["LATCHKEY_STORE": store, "LATCHKEY_AGENT_SOCK": socket]
        let token = ["token", "--issuer", issuer.absoluteString]
        _ = try Self.timed(token, throughAgent)

        var (version, directTimes, agentTimes) = ([Double](), [Double](), [Double]())
        let runs = max(7, Int(seconds * 4))
        for _ in 0..<runs {
            version.append(try Self.timed(["--version"], [:]))
            agentTimes.append(try Self.timed(token, throughAgent))
            directTimes.append(try Self.timed(token, direct))
        }
        let (bare, opened, served) = (Self.median(version), Self.median(directTimes), Self.median(agentTimes))
        report.lines.append(ReportLine(
            name: "latchkey token via the agent, ms", latchkey: served * 1000, reference: opened * 1000,
            referenceName: "latchkey token opening a passphrase vault, ms", target: .ratioAtMost(0.05)
        ))
        report.lines.append(ReportLine(
            name: "latchkey token via the agent, ms ", latchkey: served * 1000, reference: bare * 1000,
            referenceName: "latchkey --version, ms", target: .ratioAtMost(3)
        ))
    }

    private func signIns(issuer: URL, scratch: URL, into report: inout Report) async throws {
        let transport = HTTP1Transport()
        let directory = scratch.appendingPathComponent("agent-signin")
        let client = try await ProviderBenchmark.Client.bound(issuer: issuer, directory: directory, transport: transport, name: "agent-signin")
        let key = directory.appendingPathComponent("key")
        var configuration = KeyAgent.Configuration(vaultDirectory: directory.appendingPathComponent("vault"), reopenSource: .keyFile(key), logger: Logger(label: "bench-agent"))
        configuration.idleTimeout = nil
        let agent = try KeyAgent(configuration: configuration, openingWith: .keyFile(key))
        let socket = try agent.listen(at: scratch.appendingPathComponent("signin.sock").path, environment: [:])
        Task.detached { await agent.serve() }
        defer { agent.stop() }
        var facade = client.embedded.configuration
        facade.agentSocket = socket
        let viaAgent = try Embedded(configuration: facade)
        guard viaAgent.vaultAccess.agentSocket != nil else { throw BenchmarkError("the facade did not use the agent: \(viaAgent.vaultAccess)") }
        guard let redirectURI = URL(string: "http://127.0.0.1/callback") else { throw BenchmarkError("redirect URI") }

        func once(_ embedded: Embedded) async throws -> Double {
            let start = ContinuousClock.now
            let tokens = try await embedded.authenticate(issuer: issuer, clientID: "latchkey-cli", redirectURI: redirectURI)
            guard tokens.claims != nil else { throw BenchmarkError("no ID token") }
            let elapsed = ContinuousClock.now - start
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }
        _ = try await once(client.embedded)
        _ = try await once(viaAgent)
        var (direct, served) = ([Double](), [Double]())
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 2000))
        while ContinuousClock.now < deadline || direct.count < 20 {
            direct.append(try await once(client.embedded))
            served.append(try await once(viaAgent))
        }
        let (inProcess, throughAgent) = (Self.median(direct) * 1000, Self.median(served) * 1000)
        report.lines.append(ReportLine(
            name: "sign-in through the agent, ms", latchkey: throughAgent, reference: inProcess, referenceName: "sign-in over the vault in process, ms"
        ))
        report.lines.append(ReportLine(
            name: "agent's extra per sign-in, ms", latchkey: throughAgent - inProcess, reference: nil,
            referenceName: "median of \(direct.count) alternating pairs", target: .atMost(1)
        ))
    }
}
