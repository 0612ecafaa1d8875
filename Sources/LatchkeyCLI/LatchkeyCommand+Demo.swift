import Foundation
import LatchkeyCommandLine

/// `latchkey demo`'s work: a throw-away directory for the two device vaults, and the run.
extension LatchkeyCommand.Demo {
    func runProvider() async throws {
        let keep = store != nil
        let directory = store.map { URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("latchkey-demo-\(UUID().uuidString)")
        defer { if !keep { try? FileManager.default.removeItem(at: directory) } }
        try await DemoRun(directory: directory, json: json, keepVaults: keep).run()
    }
}
