package import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension LatchkeyCommand {
    /// `latchkey demo`: the whole thing end to end on this host, in seconds, explaining
    /// each step: a reference provider in this process, two throw-away device vaults,
    /// binding, sign-in, a policy step, device linking by code, deletion.
    package struct Demo: AsyncParsableCommand {
        package static let configuration = CommandConfiguration(commandName: "demo", abstract: "Walk through passwordless sign-in end to end on this host.")

        @Option(help: ArgumentHelp("Keep the two device vaults (and their key files) in this directory instead of a temporary one.", valueName: "dir"))
        package var store: String?

        @Flag(help: "Print one JSON object per step.")
        package var json = false

        package init() {}

        /// The demo runs a provider in its process: in `latchkey-provider` (``ProviderCommands``).
        package func run() async throws {
            try await ProviderCommands.runner().demo(self)
        }
    }
}
