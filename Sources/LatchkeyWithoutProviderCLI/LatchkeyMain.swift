// Imported here, compiled against the static runtime (Package.swift), so this module names
// the libraries the static Foundation needs for the linker.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCommandLine

/// `latchkey` as a host installs it (the Debian package's /usr/bin/latchkey): the command
/// tree of LatchkeyCommandLine without the provider, less than half the size. `serve`,
/// `demo` and `admin events verify` of a store on disk hand over to the full binary
/// (``ProviderCommands``).
@main
enum LatchkeyMain {
    static func main() async {
        await LatchkeyCommand.main()
    }
}
