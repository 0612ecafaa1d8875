// Imported here, compiled against the static runtime (Package.swift), so this module names
// the libraries the static Foundation needs for the linker.
import Foundation
import LatchkeyCommandLine
import LatchkeyIdP
import LatchkeyProtocol

/// `latchkey`: the whole command tree with the provider installed, so `serve`, `demo` and
/// an offline `admin events verify` run in this process. What `swift run latchkey` and
/// the tests run; the latchkey-provider package installs it as
/// /usr/libexec/latchkey/latchkey-provider, to which the host's smaller `latchkey`
/// (latchkey-without-provider) hands those commands (``ProviderCommands``).
@main
enum LatchkeyMain {
    static func main() async {
        ProviderCommands.install(ProviderRunner())
        await LatchkeyCommand.main()
    }
}

/// The commands only this binary can run, over LatchkeyIdP.
struct ProviderRunner: ProviderCommandRunner {
    func serve(_ command: LatchkeyCommand.Serve) async throws {
        try await command.runProvider()
    }

    func demo(_ command: LatchkeyCommand.Demo) async throws {
        try await command.runProvider()
    }

    func verifyEvents(store: ProviderStoreOptions, expecting: AuditHeadMark?) async throws -> AdminAPI.EventVerification {
        // Only the store is opened: no server runs, so no admin token is needed.
        var configuration = ProviderConfiguration(adminToken: "")
        // Only the store named here: no $LATCHKEY_DATABASE_URL.
        try store.configure(&configuration, environment: [:])
        return try await AuditLogVerification.verify(configuration: configuration, expecting: expecting)
    }
}
