import Foundation
import LatchkeyTestSupport
import Testing

/// A `latchkey agent` process started by a test, optionally as another user (`setpriv`),
/// its socket read from the line it prints and its log kept in a file.
final class RunningAgent: Sendable {
    let process: SpawnedProcess
    let socket: String
    let log: URL

    /// `prefix`: a command the agent runs under (`setpriv --reuid=…`), or none.
    static func start(
        _ arguments: [String], environment: [String: String], in scratch: TemporaryDirectory, prefix: [String] = []
    ) async throws -> RunningAgent {
        let log = scratch.url.appendingPathComponent("agent-\(UUID().uuidString.prefix(8)).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        chmod(log.path, 0o666)
        let binary = CommandLineTests.binary
        let command = prefix.isEmpty ? [binary.path, "agent"] + arguments : prefix + [binary.path, "agent"] + arguments
        var merged = ProcessInfo.processInfo.environment
        for name in ["LATCHKEY_PASSPHRASE", "LATCHKEY_STORE", "LATCHKEY_AGENT_SOCK", "CREDENTIALS_DIRECTORY"] { merged.removeValue(forKey: name) }
        let output = Pipe()
        let errors = try FileHandle(forWritingTo: log)
        defer { try? errors.close() }
        let process = try SpawnedProcess(
            URL(fileURLWithPath: command[0]), Array(command.dropFirst()), environment: merged.merging(environment) { $1 },
            stdout: .pipe(output), stderr: .file(errors)
        )
        let (line, transcript) = await ChildProcess.firstLine(of: output) { $0.hasPrefix("LATCHKEY_AGENT_SOCK=") }
        guard let line, let value = line.split(separator: ";").first?.dropFirst("LATCHKEY_AGENT_SOCK=".count) else {
            ChildProcess.stop(process)
            let logged = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw TestSupportError("latchkey agent did not start: \(transcript) \(logged)")
        }
        // Keep draining stdout, so the agent never blocks on it.
        Task.detached { _ = await ChildProcess.drain(output) }
        return RunningAgent(process: process, socket: String(value), log: log)
    }

    private init(process: SpawnedProcess, socket: String, log: URL) {
        self.process = process
        self.socket = socket
        self.log = log
    }

    var logged: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    func stop() { ChildProcess.stop(process) }

    /// Waits up to `seconds` for the process to end.
    func ended(within seconds: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if !process.isRunning { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return !process.isRunning
    }
}
