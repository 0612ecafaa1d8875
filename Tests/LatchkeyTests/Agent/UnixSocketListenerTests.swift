import Foundation
import Glibc
@testable import Latchkey
import LatchkeyTestSupport
import Synchronization
import Testing

/// The agent's listening socket and the process it lives in: an agent can run inside an
/// application (or a test run), so binding its socket must not change what other threads
/// of that process create.
@Suite("Agent socket: bound 0600 without touching the process umask")
struct UnixSocketListenerTests {
    @Test("binding sockets while another thread makes 0700 directories: every socket is 0600, every directory 0700 (the umask was never narrowed)")
    func umaskLeftAlone() async throws {
        let scratch = try TemporaryDirectory()
        let sockets = try scratch.subdirectory("sockets")
        let directories = try scratch.subdirectory("directories")
        let binding = Atomic<Bool>(true)
        // Another thread of the process makes directories for as long as sockets are bound.
        let maker = Task.detached {
            await Blocking.run { () -> [mode_t] in
                var modes: [mode_t] = []
                var index = 0
                while binding.load(ordering: .relaxed) || index == 0 {
                    let path = directories.appendingPathComponent("d\(index)").path
                    index += 1
                    guard mkdir(path, 0o700) == 0 else { continue }
                    var status = stat()
                    if stat(path, &status) == 0 { modes.append(status.st_mode & 0o777) }
                    rmdir(path)
                }
                return modes
            }
        }
        var socketModes: [mode_t] = []
        for index in 0..<200 {
            let path = sockets.appendingPathComponent("s\(index).sock").path
            let listener = try UnixSocketListener.bind(path: path)
            var status = stat()
            try #require(lstat(path, &status) == 0)
            socketModes.append(status.st_mode & 0o777)
            listener.remove()
        }
        binding.store(false, ordering: .relaxed)
        let directoryModes = await maker.value
        #expect(!directoryModes.isEmpty)
        #expect(directoryModes.allSatisfy { $0 == 0o700 & ~Self.currentUmask }, "modes seen: \(Set(directoryModes).map { String($0, radix: 8) })")
        #expect(socketModes.allSatisfy { $0 == 0o600 }, "socket modes: \(Set(socketModes).map { String($0, radix: 8) })")
    }

    /// The umask as the process has it, read from /proc (reading it with umask(2) would
    /// change it for a moment, the very thing under test).
    static var currentUmask: mode_t {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("Umask:") }
        return line.flatMap { mode_t($0.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8) } ?? 0o022
    }
}
