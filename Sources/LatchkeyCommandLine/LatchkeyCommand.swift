package import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Latchkey
import LatchkeyCrypto

/// `latchkey`: passwordless sign-in from the command line. Thin: each subcommand lives in
/// its own file as an extension and calls the library modules.
///
/// Exit codes: 0 on success, 1 on failure (one line on stderr), 2 on a usage error.
/// Human-readable output, errors included, is written through ``TextOutput``.
///
/// Not `@main` here: two binaries run it (Sources/LatchkeyCLI, Sources/LatchkeyProviderCLI),
/// the provider's with ``ProviderCommands`` installed.
package struct LatchkeyCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "latchkey",
        abstract: "Passwordless, passkey-style sign-in for Linux.",
        // The release and the commit (Package.swift); `latchkey --version` is also the
        // benchmark's bare process start.
        version: BuildInfo.versionLine,
        subcommands: [Demo.self, Bind.self, List.self, Authorize.self, Authenticate.self, Token.self, API.self, ClientKeyCommand.self, Login.self, Approve.self, Deny.self, Logout.self, Export.self, Import.self, Delete.self, SignUp.self, Recover.self, Serve.self, Admin.self, Agent.self, SSH.self, PAM.self, Host.self, Open.self, Desktop.self, CheckArguments.self]
    )

    package init() {}

    package static func main() async {
        // Before anything secret is read: no core file may hold the vault key, a
        // passphrase or the provider's store key (docs/SECURITY.md, "The vault").
        do {
            try ProcessProtection.disableCoreDumps()
        } catch {
            fail("\(error)")
        }
        TPMEnvironment.setDefaults()
        // The command runs, and the process ends, on the concurrency pool: a continuation
        // back on the main actor would wait for a fresh thread to take up the main queue
        // (after `dispatch_main`), a millisecond or two of every command.
        await Task.detached { await runCommand() }.value
    }

    /// Parses the arguments, runs the command and exits: 0, 1 with one line on stderr, or
    /// 2 for a usage error. exit flushes standard output.
    private static func runCommand() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
            Glibc.exit(0)
        } catch let error as LatchkeyError {
            fail(error.reason)
        } catch let error as CommandFailure {
            fail(error.message)
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                TextOutput.error(fullMessage(for: error))
                Glibc.exit(2)
            }
            if code == .success || error is ExitCode {
                exit(withError: error)
            }
            fail("\(error)")
        }
    }

    /// One clear line on stderr, exit 1.
    static func fail(_ message: String) -> Never {
        // One line: a provider's text inside the message cannot start another.
        TextOutput.error("latchkey: " + TextOutput.field(message, maximumLength: 4096))
        Glibc.exit(1)
    }
}

/// A failure to report in one line (exit code 1).
package struct CommandFailure: Error, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}
