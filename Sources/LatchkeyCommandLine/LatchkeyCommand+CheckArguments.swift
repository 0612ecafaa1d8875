import ArgumentParser

extension LatchkeyCommand {
    /// `latchkey check-arguments ARGUMENTS…` (not shown in help): reads ARGUMENTS as a
    /// `latchkey` command line with the real parser, each command's `validate()` included,
    /// prints which command it names, and runs nothing. The tests pass every command line
    /// of the README and docs/ through it, so no documented example names an option the
    /// command does not have (a usage error exits 2, as from the command itself).
    struct CheckArguments: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check-arguments",
            abstract: "Parse a latchkey command line without running it.",
            shouldDisplay: false
        )

        @Argument(parsing: .captureForPassthrough, help: "The command line, without latchkey.")
        var arguments: [String] = []

        func run() throws {
            let command = try LatchkeyCommand.parseAsRoot(arguments)
            TextOutput.line("\(type(of: command))\n")
        }
    }
}
