import Foundation
import Glibc
import Latchkey
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Synchronization
import Testing

/// A host enrolled at a test provider for `pam_latchkey` (docs/guides/pam.md): its configuration, vault and client key made by `latchkey pam
/// enroll`, its client registered with the device grant, and a PAM service file of its
/// own for `pamtester` under `pam_wrapper`.
struct PAMHost {
    let directory: TemporaryDirectory
    let config: URL
    let services: URL
    let clientID: String

    /// The module as scripts/build-pam-module.sh builds it (the one the README installs),
    /// built once per test run into a directory of its own.
    static let built: Result<URL, TestSupportError> = {
        do {
            let directory = try TemporaryDirectory()
            builtFolder.withLock { $0 = directory }
            let output = directory.url.appendingPathComponent("pam_latchkey.so")
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("scripts/build-pam-module.sh")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = [script.path, output.path]
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            let said = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                return .failure(TestSupportError("scripts/build-pam-module.sh failed: \(String(decoding: said, as: UTF8.self))"))
            }
            return .success(output)
        } catch {
            return .failure(TestSupportError("cannot run scripts/build-pam-module.sh: \(error)"))
        }
    }()
    static let builtFolder = Mutex<TemporaryDirectory?>(nil)

    /// The module the tests load (``built``).
    static var module: URL { (try? built.get()) ?? URL(fileURLWithPath: "/nonexistent/pam_latchkey.so") }
    /// Debian's libpam-wrapper, in the multiarch directory of this machine.
    static let pamWrapper = ["x86_64-linux-gnu", "aarch64-linux-gnu"].map { "/usr/lib/\($0)/libpam_wrapper.so" }
        .first { FileManager.default.fileExists(atPath: $0) } ?? "/usr/lib/x86_64-linux-gnu/libpam_wrapper.so"

    /// Skips (recording an issue under CI) when pamtester or pam_wrapper is missing.
    static func requireTools() throws {
        for tool in ["/usr/bin/pamtester", pamWrapper] where !FileManager.default.fileExists(atPath: tool) {
            try TestEnvironment.unavailable("\(tool) is missing (.ci/run installs pamtester and libpam-wrapper)")
        }
        _ = try built.get()
    }

    /// Enrolls a host as `clientID` at `provider` (registered unless `register` is false),
    /// with `extra` configuration lines.
    /// `enrollArguments` and `environment` go to `latchkey pam enroll` (`--key-protection
    /// tpm` with a software TPM's `TPM2OPENSSL_TCTI`).
    static func enroll(
        _ provider: ProviderHarness, clientID: String = "web-1", register: Bool = true, issuer: URL? = nil, extra: [String] = [],
        enrollArguments: [String] = [], environment: [String: String] = [:]
    ) async throws -> PAMHost {
        let (host, jwks) = try await enrolled(
            issuer: issuer ?? provider.issuer, clientID: clientID, extra: extra, arguments: enrollArguments, environment: environment
        )
        if register {
            let reply = try await provider.admin.call(AdminAPI.createClient, body: AdminAPI.Client(
                id: clientID, name: "web-1.example.com", jwks: try JSONDecoder().decode(JWKSDocument.self, from: jwks), grantTypes: [GrantType.deviceCode.rawValue]
            ))
            try #require(reply.status == 201, "\(String(decoding: reply.body, as: UTF8.self))")
        }
        return host
    }

    /// `latchkey pam enroll` for `issuer`, registered nowhere (a provider of the test's own).
    static func enrollOnly(issuer: URL, clientID: String) async throws -> PAMHost {
        try await enrolled(issuer: issuer, clientID: clientID, extra: []).host
    }

    /// Runs `latchkey pam enroll`; the host and the JWK Set it printed.
    private static func enrolled(
        issuer: URL, clientID: String, extra: [String], arguments: [String] = [], environment: [String: String] = [:]
    ) async throws -> (host: PAMHost, jwks: Data) {
        try requireTools()
        let directory = try TemporaryDirectory()
        let config = directory.url.appendingPathComponent("pam.conf")
        let enrolled = try await LatchkeyCommand.run([
            "pam", "enroll", "--issuer", issuer.absoluteString, "--client-id", clientID, "--config", config.path,
            "--vault", directory.url.appendingPathComponent("vault").path, "--vault-key-file", directory.url.appendingPathComponent("vault.key").path,
        ] + arguments, environment: environment)
        try #require(enrolled.status == 0, "\(enrolled.stderr)")
        #expect(enrolled.stderr.contains("latchkey admin create-client"), "\(enrolled.stderr)")
        if !extra.isEmpty {
            let handle = try FileHandle(forWritingTo: config)
            try handle.seekToEnd()
            try handle.write(contentsOf: Data((extra.joined(separator: "\n") + "\n").utf8))
            try handle.close()
        }
        let services = directory.url.appendingPathComponent("pam.d")
        try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
        return (PAMHost(directory: directory, config: config, services: services, clientID: clientID), Data(enrolled.stdout.utf8))
    }

    /// Removes the `/tmp/pam.X` directories pam_wrapper made for processes that have ended
    /// without removing them (pamtester under stdbuf; sshd's per-connection children, which
    /// end with `_exit`) and that `ours` says are the test's own. pam_wrapper names them with
    /// one character (at most 62 at once) and writes the pid of the process that made each.
    static func removeWrapperDirectories(_ ours: (_ pid: Int32, _ directory: URL) -> Bool) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []
        for name in names where name.hasPrefix("pam.") && name.count == 5 {
            let directory = URL(fileURLWithPath: "/tmp").appendingPathComponent(name)
            guard let text = try? String(contentsOf: directory.appendingPathComponent("pid"), encoding: .utf8),
                  let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)), kill(pid, 0) != 0, errno == ESRCH, ours(pid, directory)
            else { continue }
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// After sshd under pam_wrapper was stopped: removes the folders its per-connection
    /// children left with copies of `services`, waiting for a child still closing its
    /// session (15 s at most: on a loaded 2-core machine 2 s was not always enough, and a
    /// fresh-clone run found one left behind).
    static func sweepWrapperDirectories(copiesOf services: URL) {
        for _ in 0..<150 {
            removeWrapperDirectories { _, directory in copies(services, in: directory) }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []
            let left = names.filter { $0.hasPrefix("pam.") && $0.count == 5 }
                .contains { copies(services, in: URL(fileURLWithPath: "/tmp").appendingPathComponent($0)) }
            if !left { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// Whether every service file in `directory` (pam_wrapper's copy) is one of `services`,
    /// byte for byte.
    static func copies(_ services: URL, in directory: URL) -> Bool {
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0 != "pid" }
        return !files.isEmpty && files.allSatisfy { file in
            guard let copy = try? Data(contentsOf: directory.appendingPathComponent(file)),
                  let original = try? Data(contentsOf: services.appendingPathComponent(file))
            else { return false }
            return copy == original
        }
    }

    /// Sets the configuration's `timeout` (10 is the shortest it allows).
    func setTimeout(_ seconds: Int) throws {
        let text = try String(contentsOf: config, encoding: .utf8)
        try Data(text.replacingOccurrences(of: "timeout = \(PAMTimeoutDefault.seconds)", with: "timeout = \(seconds)").utf8).write(to: config)
    }

    /// Writes the service `name`: one `auth required pam_latchkey.so` line with `arguments`
    /// (the helper and the configuration unless given).
    func service(_ name: String = "latchkey-test", arguments: [String]? = nil) throws -> String {
        let line = (["auth", "required", Self.module.path] + (arguments ?? ["helper=\(LatchkeyCommand.binary.path)", "config=\(config.path)"]))
            .joined(separator: " ")
        try Data((line + "\n").utf8).write(to: services.appendingPathComponent(name))
        return name
    }

    /// `pamtester SERVICE USER authenticate` under pam_wrapper, running: its output is
    /// collected as it comes.
    /// `items` are PAM items pamtester sets first (`rhost=…`, its `-I`).
    func start(service: String, user: String, items: [String] = [], environment: [String: String] = [:]) throws -> PAMRun {
        let output = Pipe()
        var variables = [
            "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LD_PRELOAD": Self.pamWrapper, "PAM_WRAPPER": "1",
            "PAM_WRAPPER_SERVICE_DIR": services.path,
            // pam_wrapper prints what modules send to syslog on stderr: the journal line.
            "PAM_WRAPPER_DEBUGLEVEL": "3",
        ]
        variables.merge(environment) { _, new in new }
        // stdbuf: pamtester's conversation prints with stdio, which holds a pipe's output
        // until exit; line buffering shows the code while it waits.
        let process = try SpawnedProcess(
            URL(fileURLWithPath: "/usr/bin/stdbuf"), ["-oL", "-eL", "/usr/bin/pamtester"] + items.flatMap { ["-I", $0] } + ["-v", service, user, "authenticate"], environment: variables,
            stdin: .null, stdout: .pipe(output), stderr: .pipe(output)
        )
        return PAMRun(process: process, output: output)
    }
}

/// The configuration's default timeout, as `latchkey pam enroll` writes it.
enum PAMTimeoutDefault {
    static let seconds = 120
}

/// A running `pamtester`.
final class PAMRun: Sendable {
    /// What the process printed so far.
    final class Collected: Sendable {
        let text = Mutex("")
    }

    let process: SpawnedProcess
    private let collected = Collected()
    private let done = Collected()

    init(process: SpawnedProcess, output: Pipe) {
        self.process = process
        let collected = collected
        let done = done
        let handle = output.fileHandleForReading
        // A thread of its own: a blocking read on the cooperative pool (two threads on
        // two cores) would starve the provider this test talks to.
        let thread = Thread {
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                collected.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
            done.text.withLock { $0 = "done" }
        }
        thread.start()
    }

    var output: String { collected.text.withLock { $0 } }

    /// Waits (up to `seconds`) until the output holds `pattern`; the output then.
    func waitFor(_ pattern: String, seconds: Double = 30) async throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if output.contains(pattern) { return output }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        return output
    }

    /// The user code the helper showed (`latchkey approve XXXX-XXXX`).
    func userCode() async throws -> String {
        let shown = try await waitFor("latchkey approve ")
        guard let range = shown.range(of: #"latchkey approve [A-Z]{4}-[A-Z]{4}"#, options: .regularExpression) else {
            throw TestSupportError("no user code in: \(shown)")
        }
        return String(shown[range].suffix(9))
    }

    /// Waits for the end (up to `seconds`): the exit status and everything printed.
    func finish(seconds: Double = 60) async throws -> (Int32, String) {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning { process.send(SIGKILL) }
        process.waitUntilExit()
        let pid = process.processIdentifier
        PAMHost.removeWrapperDirectories { owner, _ in owner == pid }
        // The reader ends at the pipe's end of file, once every holder closed it.
        let readDeadline = Date().addingTimeInterval(5)
        while done.text.withLock({ $0.isEmpty }), Date() < readDeadline { try await Task.sleep(for: .milliseconds(20)) }
        return (process.terminationStatus ?? -1, output)
    }
}
