#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
// `struct stat`'s members are found through Dispatch's C module (MemberImportVisibility).
import CDispatch
package import LatchkeyProtocol
import Synchronization

/// What only the provider's binary can do: `serve`, `demo` (a provider in its process) and
/// `admin events verify` of a store on disk need LatchkeyIdP, its HTTP server and its
/// databases, which `latchkey`, the binary people and hosts run, does not link
/// (docs/guides/install.md, "Two packages").
package protocol ProviderCommandRunner: Sendable {
    func serve(_ command: LatchkeyCommand.Serve) async throws
    func demo(_ command: LatchkeyCommand.Demo) async throws
    /// The audit log of the store `store` names, verified offline.
    func verifyEvents(store: ProviderStoreOptions, expecting: AuditHeadMark?) async throws -> AdminAPI.EventVerification
}

/// The provider's binary installs its ``ProviderCommandRunner`` before parsing. In
/// `latchkey` none is installed, and those commands hand the whole command line over to
/// `latchkey-provider` by `fexecve`: the same process, so a unit's main PID, its signals and
/// its journal stream stay what they were.
package enum ProviderCommands {
    /// Where the latchkey-provider package installs the binary.
    package static let installedPath = "/usr/libexec/latchkey/latchkey-provider"

    private static let installed = Mutex<(any ProviderCommandRunner)?>(nil)

    package static func install(_ runner: any ProviderCommandRunner) {
        installed.withLock { $0 = runner }
    }

    /// The installed runner; without one, this process becomes `latchkey-provider` with
    /// the same arguments and never returns.
    static func runner() throws -> any ProviderCommandRunner {
        if let runner = installed.withLock({ $0 }) { return runner }
        let (path, descriptor) = try providerBinary()
        var arguments = CommandLine.arguments
        arguments[0] = "latchkey"
        let pointers = arguments.map { strdup($0) } + [nil]
        // The very file that was checked (fexecve on its descriptor): no one can put
        // another in its place between the check and the exec.
        fexecve(descriptor, pointers, environ)
        let failure = String(cString: strerror(errno))
        pointers.forEach { free($0) }
        close(descriptor)
        throw CommandFailure("cannot run \(path): \(failure)")
    }

    /// The package's binary, else (a build directory) the full `latchkey` beside this
    /// one, opened. Believed only when it is a regular file (not a link) that root or
    /// whoever runs this owns and no one else may write: running it is running the
    /// provider with this user's rights. Never this binary itself, which would hand over
    /// to itself forever.
    static func providerBinary() throws -> (path: String, descriptor: Int32) {
        let this = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        var candidates = [installedPath]
        if let this, URL(fileURLWithPath: this).lastPathComponent != "latchkey" {
            candidates.append(URL(fileURLWithPath: this).deletingLastPathComponent().appendingPathComponent("latchkey").path)
        }
        for path in candidates where path != this {
            let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else {
                if errno == ENOENT { continue }
                throw CommandFailure("\(path) cannot be opened (\(String(cString: strerror(errno)))): it is not run")
            }
            var status = stat()
            guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid == 0 || status.st_uid == geteuid(),
                  status.st_mode & 0o022 == 0
            else {
                close(descriptor)
                throw CommandFailure("\(path) is not a regular file that only root or you may write: it is not run")
            }
            return (path, descriptor)
        }
        throw CommandFailure("this command runs the provider, which is not installed here: install the latchkey-provider package (apt install latchkey-provider)")
    }
}
