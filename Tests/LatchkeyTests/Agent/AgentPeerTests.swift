import Foundation
import Glibc
import LatchkeyTestSupport
import Testing

/// Who may ask the agent (docs/SECURITY.md, "The key agent"): its own user, root only with
/// `--allow-root`, nobody else even when the socket's mode would let them connect. Runs
/// processes as `nobody` with setpriv, so it needs root (CI runs as root).
@Suite(
    "latchkey agent: other users are refused (SO_PEERCRED)",
    .requires(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "skipped: needs root and setpriv to run a process as nobody")
)
struct AgentPeerTests {
    typealias CLI = CommandLineTests
    static let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

    /// A scratch directory that `nobody` can enter (and, for `owned`, owns).
    static func shared(owned: Bool) throws -> TemporaryDirectory {
        let scratch = try TemporaryDirectory(reachableByOtherUsers: true)
        try #require(chmod(scratch.url.path, 0o755) == 0)
        if owned { try #require(chown(scratch.url.path, 65534, 65534) == 0) }
        return scratch
    }

    @Test("a process of another user (nobody) is closed on without an answer and logged, even through a socket opened to everyone")
    func anotherUserRefused() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CLI.binary.path), "latchkey is built with the tests")
        let scratch = try Self.shared(owned: false)
        let store = scratch.url.appendingPathComponent("vault").path
        let socket = scratch.url.appendingPathComponent("agent.sock").path
        let agent = try await RunningAgent.start(
            ["--socket", socket], environment: ["LATCHKEY_STORE": store, "LATCHKEY_PASSPHRASE": AgentCommandLineTests.passphrase], in: scratch
        )
        defer { agent.stop() }
        // The mistake an attacker hopes for: the socket open to all.
        try #require(chmod(socket, 0o666) == 0)
        let asked = try await ChildProcess.run(URL(fileURLWithPath: Self.nobody[0]), Array(Self.nobody.dropFirst()) + [CLI.binary.path, "agent", "--status", "--socket", socket])
        #expect(asked.status == 1 && asked.stderr.contains("stopped answering"), "\(asked.stderr)")
        #expect(!asked.stdout.contains("unlocked"))
        var logged = false
        for _ in 0..<40 where !logged {
            logged = agent.logged.contains("refused a connection from another user") && agent.logged.contains("uid=65534")
            if !logged { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(logged, "\(agent.logged)")
        // Its owner is still served.
        let own = try await CLI.latchkey(["agent", "--status", "--socket", socket], environment: [:])
        #expect(own.status == 0 && own.stdout.contains("unlocked"), "\(own.stderr)")
    }

    @Test("root is answered by another user's agent only with --allow-root")
    func rootOnlyWhenAllowed() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CLI.binary.path), "latchkey is built with the tests")
        for allowed in [false, true] {
            let scratch = try Self.shared(owned: true)
            let environment = ["LATCHKEY_STORE": scratch.url.appendingPathComponent("vault").path, "LATCHKEY_PASSPHRASE": AgentCommandLineTests.passphrase]
            let socket = scratch.url.appendingPathComponent("agent.sock").path
            let agent = try await RunningAgent.start(
                ["--socket", socket] + (allowed ? ["--allow-root"] : []), environment: environment, in: scratch, prefix: Self.nobody
            )
            defer { agent.stop() }
            let asked = try await CLI.latchkey(["agent", "--status", "--socket", socket], environment: [:])
            if allowed {
                #expect(asked.status == 0 && asked.stdout.contains("unlocked"), "\(asked.stderr) \(agent.logged)")
            } else {
                #expect(asked.status == 1 && asked.stderr.contains("stopped answering"), "\(asked.stderr)")
            }
        }
    }
}
