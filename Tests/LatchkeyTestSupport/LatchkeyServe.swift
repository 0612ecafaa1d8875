public import Foundation

/// `latchkey serve` as a child process on a loopback port, for the tests that need a
/// separate provider process (the command line, crash and disk-full tests).
public enum LatchkeyServe {
    public static var binary: URL { ChildProcess.executable("latchkey") }

    /// Starts `latchkey serve --json` with `arguments` and waits for its ready line;
    /// returns the process and its issuer. A server that does not come up is killed and
    /// its output is in the error.
    public static func start(_ arguments: [String], environment: [String: String] = [:]) async throws -> (SpawnedProcess, URL) {
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw TestSupportError("latchkey is not built at \(binary.path); it is built with the tests")
        }
        let (server, output) = try ChildProcess.start(binary, ["serve", "--json"] + arguments, environment: environment)
        let (line, transcript) = await ChildProcess.firstLine(of: output) { $0.contains("\"issuer\"") }
        struct Ready: Decodable { var issuer: String }
        guard let line, let ready = try? JSONDecoder().decode(Ready.self, from: Data(line.utf8)), let issuer = URL(string: ready.issuer) else {
            server.send(SIGKILL)
            throw TestSupportError("latchkey serve did not start: \(transcript)")
        }
        // Keep reading, so a chatty server never blocks on a full pipe.
        PipeReading.drainInBackground(output.fileHandleForReading)
        return (server, issuer)
    }
}
