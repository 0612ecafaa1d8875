import Foundation
import Latchkey
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport

/// Passwordless SSH (issue 53), against references measured in the same run:
/// - the provider's CPU (a `latchkey serve --ssh-ca` process, read from /proc) per
///   certificate issued, next to its CPU per token refresh, in alternating rounds;
/// - `latchkey ssh login` answered from kept tokens through `latchkey agent`, next to a bare
///   `latchkey --version` process; medians of alternating runs.
struct SSHBenchmark {
    var seconds: Double

    func run() async throws -> Report {
        let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("latchkey-bench-ssh-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: scratch) }
        let server = try ServeProcess.start(["--port", "0", "--ssh-ca"])
        defer { server.stop() }
        var report = Report(title: "Passwordless SSH: certificates from the provider's SSH CA")
        report.notes = [
            "server CPU from /proc of a latchkey serve --ssh-ca process (in-memory store), alternating rounds of refreshes and certificate requests",
            "process figures are medians of alternating runs",
        ]
        try await issuance(server: server, scratch: scratch, into: &report)
        try await commandLine(server: server, scratch: scratch, into: &report)
        return report
    }

    private func issuance(server: ServeProcess, scratch: URL, into report: inout Report) async throws {
        let client = try await ProviderBenchmark.Client.bound(
            issuer: server.issuer, directory: scratch.appendingPathComponent("client"), transport: HTTP1Transport(), name: "ssh-bench"
        )
        guard let redirect = URL(string: "http://127.0.0.1/callback") else { throw BenchmarkError("redirect URI") }
        var tokens = try await client.embedded.authenticate(
            issuer: server.issuer, clientID: "latchkey-cli", redirectURI: redirect, scopes: ["openid", "ssh", "offline_access"]
        )
        _ = try await client.embedded.sshLogin(issuer: server.issuer, clientID: "latchkey-cli", redirectURI: redirect)
        // /proc counts CPU in 10 ms ticks: each side needs a few hundred milliseconds of
        // the server's CPU for a tick either way to stay within a few percent (400
        // operations a side read 0.275 ms a refresh in one report and 0.4 in the next).
        let rounds = 4
        let perRound = max(100, Int(seconds * 200))
        var (refreshCPU, issueCPU) = (0.0, 0.0)
        for _ in 0..<rounds {
            var before = server.cpuSeconds
            for _ in 0..<perRound { tokens = try await client.embedded.refresh(tokens) }
            refreshCPU += server.cpuSeconds - before
            before = server.cpuSeconds
            for _ in 0..<perRound { _ = try await client.embedded.sshLogin(issuer: server.issuer, clientID: "latchkey-cli", redirectURI: redirect) }
            issueCPU += server.cpuSeconds - before
        }
        let count = Double(rounds * perRound)
        report.lines.append(ReportLine(
            name: "SSH certificate issued: server CPU ms", latchkey: issueCPU * 1000 / count, reference: refreshCPU * 1000 / count,
            referenceName: "token refresh: server CPU ms", target: .ratioAtMost(2)
        ))
    }

    private func commandLine(server: ServeProcess, scratch: URL, into report: inout Report) async throws {
        let store = scratch.appendingPathComponent("cli-vault").path
        let direct = ["LATCHKEY_STORE": store, "LATCHKEY_PASSPHRASE": AgentBenchmark.passphrase]
        let admin = AdminAPIClient(issuer: server.issuer, token: ServeProcess.adminToken, transport: HTTP1Transport())
        let created = try await admin.call(AdminAPI.createIdentity, body: AdminAPI.IdentityCreation(username: "ssh-cli-bench"))
        guard let bindURL = created.answer?.bindURL else { throw BenchmarkError("no bind URL") }
        _ = try AgentBenchmark.timed(["bind", bindURL], direct)

        let socket = scratch.appendingPathComponent("agent.sock").path
        let agent = try AgentBenchmark.startAgent(socket: socket, environment: direct)
        defer { agent.terminate(); agent.waitUntilExit() }
        let throughAgent = ["LATCHKEY_STORE": store, "LATCHKEY_AGENT_SOCK": socket]
        let login = ["ssh", "login", "--issuer", server.issuer.absoluteString]
        _ = try AgentBenchmark.timed(login, throughAgent)  // the sign-in; the runs below use its kept tokens

        var (version, logins) = ([Double](), [Double]())
        for _ in 0..<max(7, Int(seconds * 4)) {
            version.append(try AgentBenchmark.timed(["--version"], [:]))
            logins.append(try AgentBenchmark.timed(login, throughAgent))
        }
        report.lines.append(ReportLine(
            name: "latchkey ssh login from kept tokens via the agent, ms", latchkey: AgentBenchmark.median(logins) * 1000,
            reference: AgentBenchmark.median(version) * 1000, referenceName: "latchkey --version, ms", target: .ratioAtMost(3)
        ))
    }
}
