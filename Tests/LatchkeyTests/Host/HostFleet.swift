import Foundation
import Glibc
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// A fleet at a test provider and one host of it running `latchkey host run` (docs/guides/fleet.md): identities with POSIX accounts, groups, the host's client made by
/// `latchkey host enroll` and registered with client credentials and the `host` scope,
/// its labels, and the daemon, serving a userdb socket of its own name so that tests
/// never meet each other or a real `io.latchkey`.
struct HostFleet {
    let directory: TemporaryDirectory
    let config: URL
    let service: String
    let clientID: String
    /// Removes the userdb socket when the test is done with this host: a daemon killed
    /// with SIGKILL leaves it, and nss-systemd would go on trying it for every lookup.
    let sweeper: SocketSweeper

    init(directory: TemporaryDirectory, config: URL, service: String, clientID: String) {
        self.directory = directory
        self.config = config
        self.service = service
        self.clientID = clientID
        sweeper = SocketSweeper(path: "/run/systemd/userdb/\(service)")
    }

    final class SocketSweeper: Sendable {
        let path: String
        init(path: String) { self.path = path }
        deinit { unlink(path) }
    }

    var homeBase: URL { directory.url.appendingPathComponent("home") }
    var stateDirectory: URL { directory.url.appendingPathComponent("state") }
    var socket: String { "/run/systemd/userdb/\(service)" }
    var sudoersFile: URL { directory.url.appendingPathComponent("sudoers") }
    /// The provider's SSH CA keys and KRL as the daemon keeps them.
    var sshCAFile: URL { directory.url.appendingPathComponent("ca.pub") }
    var sshKRLFile: URL { directory.url.appendingPathComponent("revoked.krl") }

    /// Stops the test (failing it under CI) unless this host can serve NSS: root, for the
    /// socket under /run/systemd/userdb; nss-systemd installed and named in nsswitch.conf.
    static func requireNSS() throws {
        if getuid() != 0 { try TestEnvironment.unavailable("serving /run/systemd/userdb needs root (CI runs the tests as root)") }
        let module = ["x86_64-linux-gnu", "aarch64-linux-gnu"].map { "/lib/\($0)/libnss_systemd.so.2" }
        guard module.contains(where: FileManager.default.fileExists(atPath:)) else {
            try TestEnvironment.unavailable("nss-systemd is missing (.ci/run installs libnss-systemd)")
        }
        let nsswitch = (try? String(contentsOfFile: "/etc/nsswitch.conf", encoding: .utf8)) ?? ""
        guard nsswitch.split(separator: "\n").contains(where: { $0.hasPrefix("passwd:") && $0.contains("systemd") }) else {
            try TestEnvironment.unavailable("nsswitch.conf's passwd line does not name systemd (libnss-systemd's install adds it)")
        }
    }

    /// Enrolls a host as `clientID` with `labels`; `extra` goes to `host enroll`.
    /// With `sudoers`, the daemon keeps ``sudoersFile``.
    static func enroll(
        _ provider: ProviderHarness, clientID: String = "web-1", labels: [String] = ["web"], sudoers: Bool = false, extra: [String] = []
    ) async throws -> HostFleet {
        let directory = try TemporaryDirectory(reachableByOtherUsers: true)
        // Homes below it are entered by their owners, and sshd's principals command runs as nobody.
        chmod(directory.url.path, 0o755)
        let service = "io.latchkey-test-\(UInt32.random(in: 0...UInt32.max))"
        let config = directory.url.appendingPathComponent("host.conf")
        try FileManager.default.createDirectory(at: directory.url.appendingPathComponent("home"), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let enrolled = try await LatchkeyCommand.run([
            "host", "enroll", "--issuer", provider.issuer.absoluteString, "--client-id", clientID, "--config", config.path,
            "--vault", directory.url.appendingPathComponent("vault").path, "--vault-key-file", directory.url.appendingPathComponent("vault.key").path,
            "--state-dir", directory.url.appendingPathComponent("state").path, "--userdb-service", service,
            "--ssh-ca-file", directory.url.appendingPathComponent("ca.pub").path, "--ssh-krl-file", directory.url.appendingPathComponent("revoked.krl").path,
        ] + (sudoers ? ["--sudoers-file", directory.url.appendingPathComponent("sudoers").path] : []) + extra)
        try #require(enrolled.status == 0, "host enroll: \(enrolled.stderr)")
        // The directory's homes are under this test's folder.
        let text = try String(contentsOf: config, encoding: .utf8).replacingOccurrences(of: "home-base = /home", with: "home-base = \(directory.url.path)/home")
        try Data(text.utf8).write(to: config)
        let registered = try await provider.admin.call(AdminAPI.createClient, body: AdminAPI.Client(
            id: clientID, name: clientID, jwks: try JSONDecoder().decode(JWKSDocument.self, from: Data(enrolled.stdout.utf8)),
            grantTypes: [GrantType.clientCredentials.rawValue], scopes: [HostDirectoryPage.scope]
        ))
        try #require(registered.status == 201, "\(String(decoding: registered.body, as: UTF8.self))")
        let labelled = try await provider.admin.call(AdminAPI.setHostLabels, clientID, body: .init(labels: labels))
        try #require(labelled.status == 200, "\(String(decoding: labelled.body, as: UTF8.self))")
        return HostFleet(directory: directory, config: config, service: service, clientID: clientID)
    }

    /// `latchkey host run` for this host, its journal lines in ``log``; ready once a line
    /// holds `ready` (its first sync ended, by default). `arguments` are added.
    func run(_ arguments: [String] = [], waitFor ready: String = "directory synced") async throws -> SpawnedProcess {
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }
        try handle.seekToEnd()
        let process = try SpawnedProcess(
            LatchkeyCommand.binary, ["host", "run", "--config", config.path, "--interval", "1"] + arguments, stdout: .file(handle), stderr: .file(handle)
        )
        let started = try await Self.eventually(30, every: .milliseconds(5)) { journal().contains(ready) || !process.isRunning }
        guard started, process.isRunning else {
            let ended = process.isRunning ? "still running" : "exited with status \(process.terminationStatus.map(String.init) ?? "?")"
            ChildProcess.stop(process)
            throw TestSupportError("latchkey host run did not start (\(ended)): \(journal())")
        }
        return process
    }

    /// Where ``run(_:waitFor:)`` writes the daemon's lines.
    var log: URL { directory.url.appendingPathComponent("host.log") }

    /// What the daemon wrote so far.
    func journal() -> String {
        (try? String(contentsOf: log, encoding: .utf8)) ?? ""
    }

    /// `latchkey host ARGUMENTS --config …`.
    func command(_ arguments: [String]) async throws -> ChildProcess.Output {
        try await LatchkeyCommand.run(["host"] + arguments + ["--config", config.path])
    }

    /// An identity with a POSIX account whose home is under this host's home folder.
    func account(_ provider: ProviderHarness, _ name: String) async throws -> (identity: String, bindURL: URL, account: AdminAPI.POSIXAccount) {
        let (identity, bindURL) = try await provider.createIdentity(name)
        let reply = try await provider.admin.call(AdminAPI.setPOSIXAccount, identity, body: .init(home: homeBase.appendingPathComponent(name).path))
        let account = try #require(reply.answer, "set-posix \(name): \(String(decoding: reply.body, as: UTF8.self))")
        return (identity, bindURL, account)
    }

    /// A group with `members`, granted login (and `sudo`) on hosts labelled `label` when given.
    static func group(_ provider: ProviderHarness, _ name: String, members: [String], label: String? = nil, sudo: Bool = false) async throws -> AdminAPI.Group {
        let created = try await provider.admin.call(AdminAPI.createGroup, body: .init(name: name))
        var group = try #require(created.answer, "create-group \(name): \(String(decoding: created.body, as: UTF8.self))")
        for member in members {
            let added = try await provider.admin.call(AdminAPI.addGroupMember, name, member)
            group = try #require(added.answer, "add-member \(name) \(member): \(String(decoding: added.body, as: UTF8.self))")
        }
        if let label {
            let granted = try await provider.admin.call(AdminAPI.grantHostAccess, label, name, body: .init(sudo: sudo))
            try #require(granted.status == 200, "\(String(decoding: granted.body, as: UTF8.self))")
        }
        return group
    }

    /// A lookup through the host's own NSS.
    static func getent(_ arguments: [String]) async throws -> ChildProcess.Output {
        try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/getent"), arguments)
    }

    static func id(_ user: String) async throws -> ChildProcess.Output {
        try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/id"), [user])
    }

    /// Waits up to `seconds` for `condition`, asking every `every`.
    static func eventually(_ seconds: Double = 15, every: Duration = .milliseconds(100), _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: every)
        }
        return try await condition()
    }
}
