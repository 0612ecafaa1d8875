public import Foundation
import Testing

/// The `latchkey` command line as a test runs it: the built binary, stdin from /dev/null
/// (not a terminal), and none of the vault settings of the environment the tests run in.
/// The one runner every command-line suite shares.
public enum LatchkeyCommand {
    /// The binary SwiftPM built beside the tests, as hosts get it: `latchkey` without the
    /// provider (the Debian package's /usr/bin/latchkey), which hands `serve`, `demo` and
    /// an offline `admin events verify` over to the full `latchkey` beside it.
    public static var binary: URL { ChildProcess.executable("latchkey-without-provider") }

    /// The full binary, the provider inside (``LatchkeyServe/binary``).
    public static var fullBinary: URL { LatchkeyServe.binary }

    /// Runs `latchkey arguments…` with `environment` added. A `--json` run that exits 0
    /// with nothing on stdout is recorded as an issue: scripts read that output.
    public static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> ChildProcess.Output {
        let run = try await ChildProcess.run(binary, arguments, environment: environment, removing: ["LATCHKEY_PASSPHRASE", "LATCHKEY_STORE"])
        if run.status == 0, run.stdout.isEmpty, arguments.contains("--json") {
            Issue.record("latchkey \(arguments.prefix(2).joined(separator: " ")) … --json exited 0 with nothing on stdout; stderr: \(run.stderr)")
        }
        return run
    }
}
