import ArgumentParser
import Foundation

extension LatchkeyCommand {
    /// `latchkey demo`: the whole thing end to end on this host, in seconds, explaining
    /// each step: a reference provider in this process, two throw-away device vaults,
    /// binding, sign-in, a policy step, device linking by code, deletion.
    struct Demo: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "demo", abstract: "Walk through passwordless sign-in end to end on this host.")

        @Option(help: ArgumentHelp("Keep the two device vaults (and their key files) in this directory instead of a temporary one.", valueName: "dir"))
        var store: String?

        @Flag(help: "Print one JSON object per step.")
        var json = false

        func run() async throws {
            let keep = store != nil
            let directory = store.map { URL(fileURLWithPath: $0) }
                ?? URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("latchkey-demo-\(UUID().uuidString)")
            defer { if !keep { try? FileManager.default.removeItem(at: directory) } }
            try await DemoRun(directory: directory, json: json, keepVaults: keep).run()
        }
    }
}
