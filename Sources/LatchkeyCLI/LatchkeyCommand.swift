import ArgumentParser

/// `latchkey`: passwordless sign-in from the command line. Thin: each subcommand lives in
/// its own file as an extension and calls the library modules.
@main
struct LatchkeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latchkey",
        abstract: "Passwordless, passkey-style sign-in for Linux.",
        subcommands: [Serve.self, Admin.self]
    )
}
