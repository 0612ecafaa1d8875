import Foundation
import Glibc
import LatchkeyOAuth
import LatchkeyTestSupport
import Testing

/// `latchkey agent` and the commands that use it, all as processes over real Unix sockets
/// (issue 36): unlock once, then commands without the passphrase; lock, unlock, stop and the
/// idle timeout; an agent killed mid-request; concurrent commands.
@Suite("latchkey agent: unlock once, as processes", .serialized)
struct AgentCommandLineTests {
    typealias CLI = CommandLineTests

    static let passphrase = "agent test vault passphrase"

    /// A provider, a passphrase vault with `ada` bound in it, and the agent's socket path.
    struct Setup {
        let server: SpawnedProcess
        let issuer: URL
        let scratch: TemporaryDirectory
        let store: String

        /// The vault's environment with its passphrase (for the agent, or a direct command).
        var withPassphrase: [String: String] { ["LATCHKEY_STORE": store, "LATCHKEY_PASSPHRASE": AgentCommandLineTests.passphrase] }

        /// A command's environment through `agent`: no passphrase, no credential.
        func through(_ agent: RunningAgent) -> [String: String] {
            ["LATCHKEY_STORE": store, "LATCHKEY_AGENT_SOCK": agent.socket]
        }

        var socket: String { scratch.url.appendingPathComponent("agent.sock").path }

        func stop() { CLI.stop(server) }
    }

    static func setUp() async throws -> Setup {
        try #require(FileManager.default.isExecutableFile(atPath: CLI.binary.path), "latchkey is built with the tests")
        let (server, issuer) = try await CLI.serve()
        let scratch = try TemporaryDirectory()
        let setup = Setup(server: server, issuer: issuer, scratch: scratch, store: scratch.url.appendingPathComponent("vault").path)
        let created = try await CLI.latchkey(
            ["admin", "create-identity", "--idp", issuer.absoluteString, "--username", "ada", "--json"],
            environment: ["LATCHKEY_ADMIN_TOKEN": CLI.adminToken]
        )
        try #require(created.status == 0, "\(created.stderr)")
        let bindURL = try #require(try CLI.object(created.stdout)["bindURL"]?.stringValue)
        let bound = try await CLI.latchkey(["bind", bindURL], environment: setup.withPassphrase)
        try #require(bound.status == 0, "\(bound.stderr)")
        return setup
    }

    static func signCount(_ environment: [String: String]) async throws -> Int {
        let listed = try await CLI.latchkey(["list", "--json"], environment: environment)
        let credentials = try #require(try CLI.object(listed.stdout)["credentials"]?.arrayValue, "\(listed.stderr)")
        return try #require(credentials.first?["signCount"]?.intValue)
    }

    @Test("unlocked once with the passphrase, the agent serves sign-ins, kept tokens and listings to commands that have no passphrase; -v says so")
    func unlockOnce() async throws {
        let setup = try await Self.setUp()
        defer { setup.stop() }
        let agent = try await RunningAgent.start(["--socket", setup.socket], environment: setup.withPassphrase, in: setup.scratch)
        defer { agent.stop() }
        let environment = setup.through(agent)

        // Without the agent, the same command cannot open the vault: it has no key.
        let alone = try await CLI.latchkey(["list"], environment: ["LATCHKEY_STORE": setup.store])
        #expect(alone.status == 1 && alone.stderr.contains("needs its key"), "\(alone.stderr)")

        let signedIn = try await CLI.latchkey(["authenticate", "--issuer", setup.issuer.absoluteString, "--json"], environment: environment)
        #expect(signedIn.status == 0, "\(signedIn.stderr)")
        let accessToken = try #require(try CLI.object(signedIn.stdout)["accessToken"]?.stringValue)
        for _ in 0..<3 {
            let token = try await CLI.latchkey(["token", "--issuer", setup.issuer.absoluteString], environment: environment)
            #expect(token.status == 0 && token.stdout == accessToken + "\n", "\(token.stderr)")
        }
        let listed = try await CLI.latchkey(["list", "--json", "-v"], environment: environment)
        #expect(listed.status == 0 && listed.stderr.contains("vault through the agent at \(agent.socket)"), "\(listed.stderr)")
        #expect(try await Self.signCount(environment) == 1, "the kept tokens answered; one sign-in")

        // The socket is the user's alone.
        var status = stat()
        #expect(lstat(agent.socket, &status) == 0 && status.st_mode & 0o777 == 0o600)
        // A command for another vault does not use this agent.
        let other = try await CLI.latchkey(["list", "-v"], environment: ["LATCHKEY_STORE": setup.scratch.url.appendingPathComponent("other").path, "LATCHKEY_AGENT_SOCK": agent.socket, "LATCHKEY_PASSPHRASE": Self.passphrase])
        #expect(other.status == 0 && other.stderr.contains("opened directly") && other.stderr.contains("holds another vault"), "\(other.stderr)")
    }

    @Test("--lock, --unlock, --stop and the idle timeout; a locked agent makes commands fall back to the vault, or fail naming the agent")
    func lockUnlockStop() async throws {
        let setup = try await Self.setUp()
        defer { setup.stop() }
        // Idle for a second: locked, and it says why. (A machine busy with other tests may
        // take longer to ask: the loop waits up to 30 s.)
        let idle = try await RunningAgent.start(
            ["--socket", setup.scratch.url.appendingPathComponent("idle.sock").path, "--idle-timeout", "1s"], environment: setup.withPassphrase, in: setup.scratch
        )
        defer { idle.stop() }
        var locked = false
        for _ in 0..<60 where !locked {
            try await Task.sleep(for: .milliseconds(500))
            let state = try await CLI.latchkey(["agent", "--status", "--socket", idle.socket, "--json"], environment: [:])
            locked = (try CLI.object(state.stdout)["locked"]?.boolValue) == true
        }
        #expect(locked && idle.logged.contains("agent locked") && idle.logged.contains("idle"), "\(idle.logged)")
        idle.stop()

        let agent = try await RunningAgent.start(["--socket", setup.socket], environment: setup.withPassphrase, in: setup.scratch)
        defer { agent.stop() }
        let environment = setup.through(agent)
        let control = ["--socket", agent.socket, "--json"]
        let first = try await CLI.latchkey(["agent", "--lock"] + control, environment: [:])
        #expect(try first.status == 0 && (CLI.object(first.stdout)["locked"]?.boolValue) == true, "\(first.stderr)")
        let refused = try await CLI.latchkey(["list"], environment: environment)
        #expect(refused.status == 1 && refused.stderr.contains("locked") && refused.stderr.contains("latchkey agent --unlock"), "\(refused.stderr)")
        let fellBack = try await CLI.latchkey(["list", "-v"], environment: environment.merging(["LATCHKEY_PASSPHRASE": Self.passphrase]) { $1 })
        #expect(fellBack.status == 0 && fellBack.stderr.contains("opened directly") && fellBack.stderr.contains("locked"), "\(fellBack.stderr)")

        // Unlock with the passphrase (a wrong one is refused and leaves it locked).
        let wrongFile = try setup.scratch.keyFile("wrong", bytes: Data("not the passphrase at all".utf8))
        let wrong = try await CLI.latchkey(["agent", "--unlock", "--passphrase-file", wrongFile.path] + control, environment: [:])
        #expect(wrong.status == 1 && wrong.stderr.contains("wrong passphrase"), "\(wrong.stderr)")
        let rightFile = try setup.scratch.keyFile("right", bytes: Data(Self.passphrase.utf8))
        let unlocked = try await CLI.latchkey(["agent", "--unlock", "--passphrase-file", rightFile.path] + control, environment: [:])
        #expect(try unlocked.status == 0 && (CLI.object(unlocked.stdout)["locked"]?.boolValue) == false, "\(unlocked.stderr)")
        let served = try await CLI.latchkey(["list", "-v"], environment: environment)
        #expect(served.status == 0 && served.stderr.contains("through the agent"), "\(served.stderr)")

        let relocked = try await CLI.latchkey(["agent", "--lock"] + control, environment: [:])
        #expect(try relocked.status == 0 && (CLI.object(relocked.stdout)["locked"]?.boolValue) == true, "\(relocked.stderr)")
        let stopped = try await CLI.latchkey(["agent", "--stop"] + control, environment: [:])
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(await agent.ended(within: 5), "the agent ended")
        #expect(!FileManager.default.fileExists(atPath: agent.socket), "the socket is removed")
        #expect(agent.logged.contains("agent locked") && agent.logged.contains("agent stopping"), "\(agent.logged)")
    }

    @Test("an agent killed mid-request: the command fails naming the agent, or falls back when it has the key; a new agent replaces the stale socket")
    func killedMidRequest() async throws {
        let setup = try await Self.setUp()
        defer { setup.stop() }
        let agent = try await RunningAgent.start(["--socket", setup.socket], environment: setup.withPassphrase, in: setup.scratch)
        defer { agent.stop() }
        let environment = setup.through(agent)
        let pid = agent.process.processIdentifier

        // Stopped, the agent accepts nothing: the commands wait on it, then it dies.
        kill(pid, SIGSTOP)
        async let failing = CLI.latchkey(["list"], environment: environment)
        async let fallingBack = CLI.latchkey(["list", "-v"], environment: environment.merging(["LATCHKEY_PASSPHRASE": Self.passphrase]) { $1 })
        try await Task.sleep(for: .milliseconds(700))
        kill(pid, SIGKILL)
        let (failed, fell) = try await (failing, fallingBack)
        #expect(failed.status == 1 && failed.stderr.contains("agent"), "\(failed.stderr)")
        #expect(fell.status == 0 && fell.stderr.contains("opened directly"), "\(fell.stderr)")
        #expect(await agent.ended(within: 5))
        #expect(FileManager.default.fileExists(atPath: agent.socket), "a killed agent leaves its socket")

        let next = try await RunningAgent.start(["--socket", setup.socket], environment: setup.withPassphrase, in: setup.scratch)
        defer { next.stop() }
        let listed = try await CLI.latchkey(["list", "-v"], environment: setup.through(next))
        #expect(listed.status == 0 && listed.stderr.contains("through the agent"), "\(listed.stderr)")
        // A live agent is not replaced.
        let second = try await CLI.latchkey(["agent", "--socket", setup.socket], environment: setup.withPassphrase)
        #expect(second.status == 1 && second.stderr.contains("already serves"), "\(second.stderr)")
    }

    @Test("eight commands at once through one agent (kept tokens and listings): all answer, from the same kept tokens")
    func concurrentCommands() async throws {
        let setup = try await Self.setUp()
        defer { setup.stop() }
        let agent = try await RunningAgent.start(["--socket", setup.socket], environment: setup.withPassphrase, in: setup.scratch)
        defer { agent.stop() }
        let environment = setup.through(agent)
        let signedIn = try await CLI.latchkey(["authenticate", "--issuer", setup.issuer.absoluteString, "--json"], environment: environment)
        let accessToken = try #require(try CLI.object(signedIn.stdout)["accessToken"]?.stringValue, "\(signedIn.stderr)")
        let runs = try await withThrowingTaskGroup(of: (Bool, ChildProcess.Output).self) { group in
            for index in 0..<8 {
                group.addTask {
                    let isToken = index % 2 == 0
                    let arguments = isToken ? ["token", "--issuer", setup.issuer.absoluteString] : ["list", "--json"]
                    return (isToken, try await CLI.latchkey(arguments, environment: environment))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for (isToken, run) in runs {
            #expect(run.status == 0, "\(run.stderr)")
            if isToken { #expect(run.stdout == accessToken + "\n") }
        }
        #expect(try await Self.signCount(environment) == 1)
    }
}
