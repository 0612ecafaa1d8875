import Foundation
import LatchkeyCrypto
import Testing

/// Tools run through `posix_spawn` (Foundation's `Process` brings ICU's data into the
/// binary): the status, what the tool said, a bound on it, the environment given, and no
/// signal left blocked from the spawning thread.
@Suite("Tools run to their end")
struct ToolProcessTests {
    static func shell(environment: [String: String] = [:], keepsStandardError: Bool = true) -> ToolProcess {
        ToolProcess("/bin/sh", environment: environment, keepsStandardError: keepsStandardError)
    }

    @Test("exit status and output (standard output and error together, or error dropped) come back")
    func statusAndOutput() throws {
        let outcome = try #require(Self.shell().run(["-c", "printf out; printf err >&2; exit 3"]))
        #expect(outcome.status == 3)
        #expect(String(decoding: outcome.output, as: UTF8.self) == "outerr")
        let quiet = try #require(Self.shell(keepsStandardError: false).run(["-c", "printf out; printf err >&2"]))
        #expect(quiet.status == 0 && String(decoding: quiet.output, as: UTF8.self) == "out")
    }

    @Test("the environment is the one given, nothing of the caller's; nil passes the caller's on")
    func environment() throws {
        let outcome = try #require(Self.shell(environment: ["ONLY": "this"]).run(["-c", "printf '%s|%s' \"$ONLY\" \"$HOME\""]))
        #expect(String(decoding: outcome.output, as: UTF8.self) == "this|")
        let inherited = try #require(ToolProcess("sh").run(["-c", "printf %s \"$PATH\""]))
        #expect(String(decoding: inherited.output, as: UTF8.self) == ProcessInfo.processInfo.environment["PATH"])
    }

    @Test("a chatty tool is read to its end but kept to its bound; standard input is empty")
    func bounded() throws {
        let outcome = try #require(Self.shell().run(["-c", "cat; head -c 300000 /dev/zero"]))
        #expect(outcome.status == 0)
        #expect(outcome.output.count == 64 * 1024)
    }

    @Test("a tool killed by a signal reports 128 + the signal; SIGTERM is not blocked in it")
    func signals() throws {
        let outcome = try #require(Self.shell().run(["-c", "kill -TERM $$; sleep 5"]))
        #expect(outcome.status == 128 + SIGTERM)
    }

    @Test("a tool that does not exist is not run")
    func missing() {
        #expect(ToolProcess("/nonexistent/xdg-mime").run([]) == nil)
        #expect(ToolProcess("no-such-tool-anywhere").run([]) == nil)
    }
}
