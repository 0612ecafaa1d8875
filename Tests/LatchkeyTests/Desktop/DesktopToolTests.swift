import Foundation
@testable import Latchkey
import Testing

/// The desktop's tools run through `posix_spawn` (Foundation's `Process` brings ICU's data
/// into the binary): the status, what the tool said, a bound on it, and no signal left
/// blocked from the spawning thread.
@Suite("Desktop tools run to their end")
struct DesktopToolTests {
    static let shell = DesktopTool(path: "/bin/sh")

    @Test("exit status and output (standard output and error together) come back")
    func statusAndOutput() throws {
        let outcome = try #require(Self.shell.run(["-c", "printf out; printf err >&2; exit 3"], environment: [:]))
        #expect(outcome.status == 3)
        #expect(String(decoding: outcome.output, as: UTF8.self) == "outerr")
    }

    @Test("the environment is the one given, nothing of the caller's")
    func environment() throws {
        let outcome = try #require(Self.shell.run(["-c", "printf '%s|%s' \"$ONLY\" \"$HOME\""], environment: ["ONLY": "this"]))
        #expect(String(decoding: outcome.output, as: UTF8.self) == "this|")
    }

    @Test("a chatty tool is read to its end but kept to 64 KiB; standard input is empty")
    func bounded() throws {
        let outcome = try #require(Self.shell.run(["-c", "cat; head -c 300000 /dev/zero"], environment: [:]))
        #expect(outcome.status == 0)
        #expect(outcome.output.count == DesktopTool.maximumOutput)
    }

    @Test("a tool killed by a signal reports 128 + the signal; SIGTERM is not blocked in it")
    func signals() throws {
        let outcome = try #require(Self.shell.run(["-c", "kill -TERM $$; sleep 5"], environment: [:]))
        #expect(outcome.status == 128 + SIGTERM)
    }

    @Test("a tool that does not exist is not run")
    func missing() {
        #expect(DesktopTool(path: "/nonexistent/xdg-mime").run([], environment: [:]) == nil)
    }
}
