import Foundation
import LatchkeyTestSupport
import Testing

/// A desktop of its own for one test: `HOME`, `XDG_DATA_HOME`, `XDG_CONFIG_HOME` and the
/// system folders in a temporary directory, xdg-utils' generic desktop
/// (`XDG_CURRENT_DESKTOP=X-Generic`, a dummy `DISPLAY`, since xdg-open's generic path tries
/// scheme handlers only on a display), a vault opened by a key file, and the stand-in
/// terminal (`Tests/Interop/standin_terminal.py`) as `$TERMINAL`.
struct DesktopSandbox {
    let scratch: TemporaryDirectory
    let environment: [String: String]
    let answers: URL
    let transcript: URL

    /// The tools the tests need; `.ci/run` installs them.
    static let tools = ["xdg-open", "xdg-mime", "update-desktop-database", "python3", "setsid"]

    static var available: Bool {
        tools.allSatisfy { tool in
            (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
                .contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
        }
    }

    init() throws {
        scratch = try TemporaryDirectory()
        let root = scratch.url
        answers = root.appendingPathComponent("answers")
        transcript = root.appendingPathComponent("transcript")
        try Data("y\n".utf8).write(to: answers)
        var environment = try CommandLineTests.vaultKeyEnvironment(scratch, "vault")
        environment.merge([
            "HOME": root.appendingPathComponent("home").path,
            "XDG_DATA_HOME": root.appendingPathComponent("data").path,
            "XDG_CONFIG_HOME": root.appendingPathComponent("config").path,
            // The host's own applications and defaults are not this desktop's.
            "XDG_DATA_DIRS": root.appendingPathComponent("system-data").path,
            "XDG_CONFIG_DIRS": root.appendingPathComponent("system-config").path,
            "XDG_CURRENT_DESKTOP": "X-Generic",
            "DISPLAY": ":97",
            "TERMINAL": PythonInterop.scripts.appendingPathComponent("standin_terminal.py").path,
            "LATCHKEY_TEST_ANSWERS": answers.path,
            "LATCHKEY_TEST_TRANSCRIPT": transcript.path,
        ]) { $1 }
        self.environment = environment
        for folder in ["home", "data", "config", "system-data", "system-config"] {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
    }

    /// `latchkey arguments…` in this desktop.
    func latchkey(_ arguments: [String]) async throws -> ChildProcess.Output {
        try await ChildProcess.run(LatchkeyServe.binary, arguments, environment: environment, removing: Self.foreign)
    }

    /// A tool (`xdg-mime`, `xdg-open`) in this desktop, in a session of its own: with no
    /// controlling terminal, xdg-open opens a `Terminal=true` entry in `$TERMINAL`.
    func tool(_ arguments: [String]) async throws -> ChildProcess.Output {
        try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/setsid"), ["-w"] + arguments, environment: environment, removing: Self.foreign)
    }

    /// What the machine's own session might set that would send xdg-open elsewhere.
    static let foreign = ["BROWSER", "WAYLAND_DISPLAY", "LATCHKEY_PASSPHRASE", "DESKTOP_SESSION", "KDE_FULL_SESSION", "GNOME_DESKTOP_SESSION_ID"]

    /// What the stand-in terminal showed.
    func shown() -> String {
        String(decoding: (try? Data(contentsOf: transcript)) ?? Data(), as: UTF8.self)
    }

    /// The desktop file id xdg-mime names for `scheme`'s links, or "".
    func handler(_ scheme: String) async throws -> String {
        try await tool(["xdg-mime", "query", "default", "x-scheme-handler/\(scheme)"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
