public import Foundation
import LatchkeyOAuth
import Synchronization

/// A real headless Chromium driven over WebDriver (W3C WebDriver, with Chrome's WebAuthn
/// virtual authenticator extension, WebAuthn L3 §11): Debian's `chromium` and
/// `chromium-driver`, which `.ci/run` installs. One ``Chromium`` is one chromedriver
/// process on a free loopback port; each ``session()`` is a fresh browser with its own
/// profile, so passkeys and cookies of one test never reach another.
public final class Chromium: Sendable {
    public static let driverPath = "/usr/bin/chromedriver"
    /// Debian's `/usr/bin/chromium` is a shell wrapper; the driver starts the binary itself.
    public static let browserPath = "/usr/lib/chromium/chromium"

    /// Whether both are installed.
    public static var available: Bool {
        FileManager.default.isExecutableFile(atPath: driverPath) && FileManager.default.isExecutableFile(atPath: browserPath)
    }

    public let endpoint: URL
    private let process: SpawnedProcess
    /// The browsers' home, temporary directory and profiles, and chromedriver's log:
    /// nothing of the user's home is read, and nothing is left in `/tmp` (Chromium puts its
    /// `org.chromium.Chromium.*` folders in `$TMPDIR`, and leaves them when it is killed).
    /// Removed after the processes stop (stored properties go after ``deinit``'s body).
    private let home: TemporaryDirectory
    private let sessions = Mutex(0)

    /// chromedriver listens on the port on both 127.0.0.1 and ::1 and exits when either is
    /// taken. ``LoopbackPort/free()`` checks both, but only at the moment it asks, so another
    /// process can take the port meanwhile (a full CI run failed once with "IPv6 port not
    /// available"). A start that fails for a taken port is tried again on another.
    public init() async throws {
        let home = try TemporaryDirectory()
        let environment = [
            "HOME": home.url.path, "TMPDIR": home.url.path,
            "XDG_CONFIG_HOME": home.url.appendingPathComponent(".config").path,
            "XDG_CACHE_HOME": home.url.appendingPathComponent(".cache").path,
        ]
        let log = home.url.appendingPathComponent("chromedriver.log").path
        var attempt = 0
        var started: (process: SpawnedProcess, port: Int)?
        while started == nil {
            attempt += 1
            let port = try LoopbackPort.free()
            do {
                let (process, _) = try await ChildProcess.startHelper(
                    URL(fileURLWithPath: Self.driverPath), ["--port=\(port)", "--allowed-ips=127.0.0.1", "--log-path=\(log)"],
                    name: "chromedriver", environment: environment
                ) { $0.contains("started successfully") }
                started = (process, port)
            } catch let error as TestSupportError where attempt < 5 && error.description.contains("Address already in use") {
                continue
            }
        }
        guard let (process, port) = started, let endpoint = URL(string: "http://127.0.0.1:\(port)") else {
            if let started { ChildProcess.stop(started.process) }
            throw TestSupportError("chromedriver has no URL")
        }
        self.process = process
        self.endpoint = endpoint
        self.home = home
    }

    /// Stops chromedriver and then whatever it started: a browser whose session was never
    /// deleted (a test that failed midway, a session request that timed out) would
    /// otherwise outlive the test run. The browsers are found before chromedriver stops,
    /// while they are still its descendants, so no other process is signalled.
    deinit {
        let browsers = ChildProcess.descendants(of: process.processIdentifier)
        ChildProcess.stop(process)
        for pid in browsers where !ChildProcess.hasEnded(pid) {
            // Still a Chromium process, not a PID reused meanwhile.
            let command = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))) ?? Data()
            if String(decoding: command, as: UTF8.self).hasPrefix("/usr/lib/chromium/") { kill(pid, SIGKILL) }
        }
    }

    /// A new browser: headless, no sandbox (below), `/dev/shm` not used (it is small in
    /// containers), a profile of its own.
    public func session(width: Int = 1000, height: Int = 900) async throws -> WebDriverSession {
        let number = sessions.withLock { count -> Int in
            count += 1
            return count
        }
        let profile = try home.subdirectory("profile-\(number)")
        var arguments = [
            "--headless=new", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
            "--disable-crash-reporter", "--user-data-dir=\(profile.path)", "--window-size=\(width),\(height)",
        ]
        // Chromium's sandbox needs root's consent (it refuses to run as root with it) or
        // user namespaces, which containers often lack; as an ordinary user there it exits
        // at start ("Chrome instance exited"). The pages are the provider's own, so the
        // tests run without it, as root and as anyone else alike.
        arguments.append("--no-sandbox")
        let capabilities: JSONValue = ["capabilities": ["alwaysMatch": [
            "browserName": "chrome",
            "goog:chromeOptions": ["binary": .string(Self.browserPath), "args": .array(arguments.map(JSONValue.string))],
            "webauthn:virtualAuthenticators": true,
        ]]]
        let answer: JSONValue?
        do {
            answer = try await WebDriverSession.command(endpoint.appendingPathComponent("session"), method: "POST", body: capabilities, timeout: 60)
        } catch {
            throw TestSupportError("Chromium did not start (\(error)); chromedriver's log ends: \(logTail())")
        }
        guard let id = answer?["sessionId"]?.stringValue else {
            throw TestSupportError("chromedriver answered no session: \(String(describing: answer)); its log ends: \(logTail())")
        }
        return WebDriverSession(base: endpoint.appendingPathComponent("session").appendingPathComponent(id))
    }

    /// The last lines chromedriver logged, for a failure's reason.
    private func logTail() -> String {
        let text = (try? String(contentsOf: home.url.appendingPathComponent("chromedriver.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(12).joined(separator: "\n")
    }
}
