import Foundation
import Glibc
import LatchkeyTestSupport
import Testing

/// `pam_latchkey.so` inside a multithreaded host of the tests' own (`Tests/PAMThreads/
/// pam_threads.c`, under pam_wrapper), as sshd, sudo and display managers load it: it
/// touches no process-wide state, refuses a helper that others may write, and shows or
/// logs nothing a terminal or a log reader would act on (docs/SECURITY.md, "PAM").
@Suite("PAM: pam_latchkey in a multithreaded host", .serialized)
struct PAMThreadedHostTests {
    /// The host program, compiled once with the machine's C compiler against libpam.
    static func host() async throws -> URL {
        try PAMHost.requireTools()
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("PAMThreads/pam_threads.c")
        return try await CompiledC.build(source, as: "pam_threads", flags: ["-O1", "-Wall"], libraries: ["-lpam", "-lpthread"])
    }

    /// A private directory with PAM service files and helper scripts.
    struct Stage {
        let directory: TemporaryDirectory
        var services: URL { directory.url.appendingPathComponent("pam.d") }

        init() throws {
            directory = try TemporaryDirectory()
            try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
        }

        /// A `/bin/sh` helper called `name` in `folder` (the stage itself unless given).
        func helper(_ name: String, _ body: String, in folder: URL? = nil, mode: mode_t = 0o755) throws -> URL {
            let url = (folder ?? directory.url).appendingPathComponent(name)
            try Data(("#!/bin/sh\n" + body + "\n").utf8).write(to: url)
            chmod(url.path, mode)
            return url
        }

        /// The service `name`: `auth required pam_latchkey.so helper=HELPER timeout=5`.
        func service(_ name: String, helper: URL) throws -> String {
            let line = "auth required \(PAMHost.module.path) helper=\(helper.path) timeout=5\n"
            try Data(line.utf8).write(to: services.appendingPathComponent(name))
            return name
        }

        /// Runs the host: its exit status, its summary's fields, its `message:` lines, and
        /// what pam_wrapper printed of the module's syslog.
        /// `under`: a program the host runs inside, with its arguments (valgrind).
        func run(_ service: String, threads: Int = 1, rounds: Int = 1, options: [String] = [], under wrapper: [String] = []) async throws -> Run {
            let host = try await PAMThreadedHostTests.host()
            let command = wrapper + [host.path, service, "alice", String(threads), String(rounds)] + options
            let output = try await ChildProcess.run(URL(fileURLWithPath: command[0]), Array(command.dropFirst()), environment: [
                "LD_PRELOAD": PAMHost.pamWrapper, "PAM_WRAPPER": "1", "PAM_WRAPPER_SERVICE_DIR": services.path, "PAM_WRAPPER_DEBUGLEVEL": "3",
            ])
            // The host has ended; pam_wrapper may have left its copy of these services.
            let services = services
            PAMHost.removeWrapperDirectories { _, directory in PAMHost.copies(services, in: directory) }
            return Run(status: output.status, stdout: output.stdout, log: output.stderr)
        }
    }

    struct Run {
        let status: Int32
        let stdout: String
        let log: String

        /// A field of the summary line (`success=3` → "3").
        subscript(_ name: String) -> String? {
            let summary = stdout.split(separator: "\n").last { $0.hasPrefix("success=") } ?? ""
            return summary.split(separator: " ").first { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }
        }

        var messages: [String] { stdout.split(separator: "\n").filter { $0.hasPrefix("message: ") }.map { String($0.dropFirst(9)) } }
    }

    /// A helper that follows the protocol: reads the request, writes `lines`.
    static func wellBehaved(_ lines: [String]) -> String {
        "while read -r l; do [ -z \"$l\" ] && break; done\necho LATCHKEY-PAM/1\n" + lines.map { "printf '%s\\n' '\($0)'" }.joined(separator: "\n")
    }

    @Test("eight threads at once, each with a helper that quits after its prompt: the host is not killed by SIGPIPE, and SIGPIPE never leaves its default")
    func helperQuitsAfterPrompt() async throws {
        let stage = try Stage()
        let helper = try stage.helper("quitter", "echo LATCHKEY-PAM/1\necho 'PROMPT press Enter'\nexit 0")
        let run = try await stage.run(try stage.service("quitter", helper: helper), threads: 8, rounds: 10)
        #expect(run.status == 0, "the host ended with \(run.status) (13 is SIGPIPE): \(run.stdout)")
        #expect(run["failure"] == "80" && run["success"] == "0", "\(run.stdout)")
        #expect(run["sigpipe-ignored-seen"] == "0" && run["sigpipe-at-end"] == "default", "\(run.stdout)")
    }

    @Test("eight threads with a well-behaved helper, the host reaping every child in its SIGCHLD handler: every call succeeds, SIGPIPE is never ignored, the host's own child lives")
    func reapingHost() async throws {
        let stage = try Stage()
        let helper = try stage.helper("good", Self.wellBehaved(["RESULT success approved"]))
        for options in [[], ["reap"]] {
            let run = try await stage.run(try stage.service("good", helper: helper), threads: 8, rounds: 10, options: options)
            #expect(run.status == 0 && run["success"] == "80" && run["failure"] == "0", "\(options): \(run.stdout)")
            #expect(run["sigpipe-ignored-seen"] == "0" && run["sigpipe-at-end"] == "default", "\(options): \(run.stdout)")
            #expect(run["bystander"] == "alive", "\(options): \(run.stdout)")
        }
    }

    @Test("a helper that never reads the request and never answers: the call ends at the module's timeout")
    func helperThatNeverReads() async throws {
        let stage = try Stage()
        let helper = try stage.helper("mute", "exec sleep 600")
        let started = Date()
        let run = try await stage.run(try stage.service("mute", helper: helper), threads: 2)
        #expect(run.status == 0 && run["failure"] == "2" && run.log.contains("did not answer in time"), "\(run.stdout) \(run.log)")
        #expect(Date().timeIntervalSince(started) < 15)
    }

    @Test("PAM_SILENT: the helper's INFO and ERROR lines and the module's own failure message are not shown; its prompt still is")
    func silent() async throws {
        let stage = try Stage()
        let helper = try stage.helper("chatty", Self.wellBehaved(["INFO hello", "ERROR careful", "RESULT auth_err no"]))
        let service = try stage.service("chatty", helper: helper)
        let loud = try await stage.run(service, options: ["show"])
        #expect(loud.messages == ["hello", "careful"] && loud["messages"] == "2", "\(loud.stdout)")
        let quiet = try await stage.run(service, options: ["show", "silent"])
        #expect(quiet.messages.isEmpty && quiet["messages"] == "0" && quiet["failure"] == "1", "\(quiet.stdout)")
    }

    @Test("what the helper shows loses C1 controls (U+009B, a raw 0x9B), bidi overrides and malformed UTF-8; a %0A in RESULT does not forge a syslog line")
    func displayFilter() async throws {
        let stage = try Stage()
        let helper = try stage.helper("hostile", Self.wellBehaved([
            "INFO a%C2%9B31mred b%9Bc d%E2%80%AEevil e%E2%81%A6f g%C0%AFh caf%C3%A9 %E2%9C%93",
            "RESULT auth_err bad%0APWRAP_ERROR[forged] - SYSLOG(5): pam_latchkey approved root%E2%80%A8x",
        ]))
        let run = try await stage.run(try stage.service("hostile", helper: helper), options: ["show"])
        #expect(run.messages == ["a?31mred b?c d?evil e?f g??h café ✓"], "\(run.messages)")
        for forbidden in [[0xC2, 0x9B], [0x9B], [0xE2, 0x80, 0xAE], [0xE2, 0x81, 0xA6], [0xE2, 0x80, 0xA8]] as [[UInt8]] {
            #expect(!Array(run.stdout.utf8).contains(forbidden) && !Array(run.log.utf8).contains(forbidden), "\(forbidden) passed through")
        }
        #expect(run.log.contains("bad?PWRAP_ERROR[forged]"), "\(run.log)")
        #expect(!run.log.split(separator: "\n").contains { $0.hasPrefix("PWRAP_ERROR[forged]") }, "a forged syslog line: \(run.log)")
    }

    @Test("helper= writable by group or others, in a directory others may write, owned by another user, or reached by a link into such a directory: refused before it runs")
    func untrustedHelper() async throws {
        let stage = try Stage()
        let marker = stage.directory.url.appendingPathComponent("ran")
        let body = "touch \(marker.path)\n" + Self.wellBehaved(["RESULT success approved"])
        let open = try stage.directory.subdirectory("open")
        chmod(open.path, 0o777)
        var cases: [(String, URL)] = [
            ("writable by others", try stage.helper("others", body, mode: 0o757)),
            ("writable by its group", try stage.helper("group", body, mode: 0o775)),
            ("in a directory others may write", try stage.helper("helper", body, in: open)),
        ]
        let link = stage.directory.url.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: open.appendingPathComponent("helper"))
        cases.append(("a link into a directory others may write", link))
        if getuid() == 0 {
            let foreign = try stage.helper("foreign", body)
            #expect(chown(foreign.path, 65534, 65534) == 0)
            cases.append(("owned by nobody", foreign))
        }
        for (name, helper) in cases {
            let run = try await stage.run(try stage.service("untrusted", helper: helper))
            #expect(run.status == 0 && run["failure"] == "1" && run.log.contains("refused helper"), "\(name): \(run.stdout) \(run.log)")
            #expect(!FileManager.default.fileExists(atPath: marker.path), "\(name): the helper ran")
        }
        // The same helper, trusted, runs.
        let trusted = try stage.helper("trusted", body)
        let run = try await stage.run(try stage.service("trusted", helper: trusted))
        #expect(run["success"] == "1" && FileManager.default.fileExists(atPath: marker.path), "\(run.stdout) \(run.log)")
    }

    @Test("an answer the conversation returned together with an error is zeroed and freed: valgrind finds no block the conversation allocated lost")
    func answerWithConversationError() async throws {
        let valgrind = "/usr/bin/valgrind"
        try #require(FileManager.default.isExecutableFile(atPath: valgrind), "valgrind is missing (.ci/run installs it)")
        let stage = try Stage()
        let helper = try stage.helper("prompter", "while read -r l; do [ -z \"$l\" ] && break; done\necho LATCHKEY-PAM/1\necho 'PROMPT press Enter'\nread -r c\necho 'RESULT auth_err no'")
        let run = try await stage.run(
            try stage.service("prompter", helper: helper), options: ["conv-error"],
            under: [valgrind, "--leak-check=full", "--show-leak-kinds=definite", "--trace-children=no"]
        )
        #expect(run.status == 0 && run["failure"] == "1", "\(run.stdout) \(run.log.suffix(2000))")
        #expect(run.log.contains("ERROR SUMMARY"), "valgrind ran: \(run.log.suffix(2000))")
        // Each lost block is reported with the stack that allocated it.
        let lost = run.log.components(separatedBy: "definitely lost in").dropFirst().map { $0.prefix(1500) }
        #expect(!lost.contains { $0.contains("conversation") }, "the conversation's answer was lost: \(lost)")
    }
}
