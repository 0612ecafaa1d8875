import Foundation
import Glibc
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport

/// A host of the fleet (issue 74): `latchkey host run` (this build's binary) synced from a
/// `latchkey serve` process holding 10,000 POSIX accounts in 1,000 groups, all granted to
/// the host, and
/// - `getent passwd NAME` of a directory account, through the host's own NSS (nss-systemd
///   asking the daemon's varlink socket), next to `getent passwd` of a local
///   `/etc/passwd` account, each a new process as a program's lookup is, in alternating
///   rounds;
/// - the daemon's peak resident memory (`VmHWM`) after its sync of the 10,000 accounts,
///   against a fixed 64 MiB.
///
/// Needs root (the socket is under /run/systemd/userdb) and nss-systemd in nsswitch.conf.
struct HostBenchmark {
    var seconds: Double
    var accounts = 10_000
    var groups = 1_000

    func run() async throws -> Report {
        var report = Report(title: "A fleet host: the directory through NSS (\(accounts) accounts, \(groups) groups)")
        guard getuid() == 0 else {
            report.notes = ["skipped: serving /run/systemd/userdb needs root"]
            return report
        }
        let scratch = URL(fileURLWithPath: "/tmp").appendingPathComponent("latchkey-bench-host-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(at: scratch) }
        let server = try ServeProcess.start(["--port", "0"])
        defer { server.stop() }
        let transport = HTTP1Transport()
        try await FleetBenchmark(seconds: seconds, accounts: accounts, groups: groups).seed(server.issuer, transport: transport)
        let (daemon, service) = try await startHost(server.issuer, scratch: scratch, transport: transport)
        defer { daemon.terminate(); daemon.waitUntilExit(); unlink("/run/systemd/userdb/\(service)") }
        let name = "user\(accounts / 2)"
        guard try await HostBenchmark.eventually({ try await Self.getent(name).status == 0 }) else {
            throw BenchmarkError("getent passwd \(name) never answered through NSS; is nss-systemd in nsswitch.conf?")
        }
        let peak = Self.peakResident(daemon.processIdentifier)
        report.notes = [
            "getent runs as a new process each time; medians of alternating rounds",
            "the local account is \(Self.localUser) from /etc/passwd (nsswitch: files first)",
            "peak resident memory is the daemon's VmHWM after its first sync",
        ]
        var (directory, local) = ([Double](), [Double]())
        let perRound = max(20, Int(seconds * 20))
        for _ in 0..<8 {
            local.append(try await Self.time(perRound) { try await Self.getent(Self.localUser) })
            directory.append(try await Self.time(perRound) { try await Self.getent(name) })
        }
        report.lines.append(ReportLine(
            name: "getent passwd of a directory account (ms)", latchkey: AgentBenchmark.median(directory), reference: AgentBenchmark.median(local),
            referenceName: "getent passwd of a local account (ms)", target: .ratioAtMost(3)
        ))
        report.lines.append(ReportLine(
            name: "host daemon peak resident MiB after syncing \(accounts) accounts", latchkey: peak, reference: nil,
            referenceName: "", target: .atMost(64)
        ))
        return report
    }

    static let localUser = "daemon"

    /// Enrolls and registers the host, then starts its daemon; answers it and its service name.
    private func startHost(_ issuer: URL, scratch: URL, transport: HTTP1Transport) async throws -> (SpawnedProcess, String) {
        let service = "io.latchkey-bench-\(UInt32.random(in: 0...UInt32.max))"
        let config = scratch.appendingPathComponent("host.conf")
        let enroll = try await ChildProcess.run(ServeProcess.binary, [
            "host", "enroll", "--issuer", issuer.absoluteString, "--client-id", "bench-host", "--config", config.path,
            "--vault", scratch.appendingPathComponent("vault").path, "--vault-key-file", scratch.appendingPathComponent("vault.key").path,
            "--state-dir", scratch.appendingPathComponent("state").path, "--userdb-service", service,
            "--ssh-ca-file", scratch.appendingPathComponent("ca.pub").path, "--ssh-krl-file", scratch.appendingPathComponent("revoked.krl").path,
        ])
        guard enroll.status == 0 else { throw BenchmarkError("host enroll: \(enroll.stderr)") }
        let admin = AdminAPIClient(issuer: issuer, token: ServeProcess.adminToken, transport: transport)
        let jwks = try JSONDecoder().decode(JWKSDocument.self, from: Data(enroll.stdout.utf8))
        let registered = try await admin.call(AdminAPI.createClient, body: AdminAPI.Client(
            id: "bench-host", jwks: jwks, grantTypes: [GrantType.clientCredentials.rawValue], scopes: [HostDirectoryPage.scope]
        ))
        guard registered.status == 201 else { throw BenchmarkError("register the host: HTTP \(registered.status)") }
        guard try await admin.call(AdminAPI.setHostLabels, "bench-host", body: .init(labels: ["web"])).status == 200 else { throw BenchmarkError("set-host-labels") }
        let daemon = try SpawnedProcess(ServeProcess.binary, ["host", "run", "--config", config.path, "--interval", "3600"])
        return (daemon, service)
    }

    private static func getent(_ name: String) async throws -> ChildProcess.Output {
        try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/getent"), ["passwd", name])
    }

    /// Milliseconds per run of `work`, over `count` runs.
    private static func time(_ count: Int, _ work: () async throws -> ChildProcess.Output) async throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<count {
            guard try await work().status == 0 else { throw BenchmarkError("a getent failed") }
        }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 / Double(count)
    }

    /// `VmHWM` of `pid`, in MiB.
    private static func peakResident(_ pid: Int32) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kibibytes = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        else { return .nan }
        return kibibytes / 1024
    }

    private static func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        for _ in 0..<1200 {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }
}
