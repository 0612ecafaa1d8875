import Foundation
import Latchkey
import LatchkeyOAuth
import LatchkeyTestSupport

/// Latchkey's provider next to a peer written in Python (docs/PERFORMANCE.md, "A Python
/// peer"): `scripts/peer_provider.py` (Flask, py_webauthn, Authlib) serves the same
/// redirect-flow sign-in (`/authorize`, the authenticate URL's options and assertion,
/// `/token` with an ES256 ID token), and the same clients sign in at each, one after the
/// other, at 1, 16 and 64 clients. Both keep their state in memory; each one's CPU per
/// sign-in is read from /proc. Issue 55's target: Latchkey spends at most a quarter of
/// the peer's CPU per sign-in.
struct PeerProviderBenchmark {
    var seconds: Double
    var concurrencies = [1, 16, 64]

    /// The peer, beside the package's sources (the benchmark is built from a checkout).
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/peer_provider.py")

    func run() async throws -> Report {
        var report = Report(title: "Latchkey's provider next to a Python peer (Flask, py_webauthn, Authlib): server CPU from /proc")
        guard let peer = try Self.startPeer() else {
            report.notes.append("Python peer: skipped (python3 with flask, authlib and webauthn not found; .ci/run and scripts/performance-report.sh install them)")
            return report
        }
        let latchkey = try ServeProcess.start(["--port", "0"])
        defer {
            peer.stop()
            latchkey.stop()
        }
        report.notes = [
            "the redirect flow at both (four round trips); `latchkey serve` with its store in memory, the peer with its dictionaries",
            "CPU in milliseconds per sign-in; the reference column is the peer's",
        ]
        let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("latchkey-bench-peer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: scratch) }
        let transport = HTTP1Transport()
        let count = concurrencies.max() ?? 1
        var ours: [ProviderBenchmark.Client] = []
        var theirs: [ProviderBenchmark.Client] = []
        for index in 0..<count {
            ours.append(try await ProviderBenchmark.Client.bound(
                issuer: latchkey.issuer, directory: scratch.appendingPathComponent("latchkey-\(index)"), transport: transport, name: "bench-\(index)"
            ))
            theirs.append(try await Self.boundAtPeer(peer.issuer, directory: scratch.appendingPathComponent("peer-\(index)"), transport: transport, name: "bench-\(index)"))
        }
        let timer = ProviderBenchmark(seconds: seconds)
        let (latchkeyClients, peerClients) = (ours, theirs)
        for concurrency in concurrencies {
            let latchkeyCPU = try await cpuPerSignIn(latchkey, timer: timer, concurrency: concurrency) { try await latchkeyClients[$0].authenticate(flow: .redirect) }
            let peerCPU = try await cpuPerSignIn(peer, timer: timer, concurrency: concurrency) { try await peerClients[$0].authenticate(flow: .redirect) }
            report.lines.append(ReportLine(
                name: "vs Python peer, \(concurrency) clients: server CPU ms/sign-in", latchkey: latchkeyCPU, reference: peerCPU,
                referenceName: "the peer's CPU ms/sign-in", target: .ratioAtMost(0.25)
            ))
        }
        return report
    }

    /// The server's CPU milliseconds per sign-in over one measurement; a failed sign-in
    /// fails the run, since its CPU would count for nothing.
    private func cpuPerSignIn(
        _ server: ServeProcess, timer: ProviderBenchmark, concurrency: Int, _ operation: @escaping @Sendable (Int) async throws -> Void
    ) async throws -> Double {
        let before = server.cpuSeconds
        let figures = try await timer.measure(concurrency: concurrency, operation)
        let cpu = server.cpuSeconds - before
        guard figures.errors == 0 else { throw BenchmarkError("sign-ins at \(server.issuer) failed: \(figures.firstError ?? "-")") }
        return cpu * 1000 / max(figures.throughput * seconds + Double(concurrency), 1)
    }

    /// Starts the peer and waits for its `READY <issuer>` line; nil when this machine's
    /// python3 lacks its packages.
    static func startPeer() throws -> ServeProcess? {
        let check = Process()
        check.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        check.arguments = ["python3", "-c", "import flask, authlib, webauthn"]
        check.standardOutput = FileHandle.nullDevice
        check.standardError = FileHandle.nullDevice
        try check.run()
        check.waitUntilExit()
        guard check.terminationStatus == 0 else { return nil }
        let output = Pipe()
        let process = try SpawnedProcess(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path], stdout: .pipe(output))
        var text = ""
        while !text.contains("\n") {
            let chunk = PipeReading.chunk(output.fileHandleForReading)
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard text.hasPrefix("READY "), let issuer = URL(string: text.dropFirst(6).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw BenchmarkError("the Python peer did not start: \(text)")
        }
        return ServeProcess(process: process, issuer: issuer)
    }

    /// A client whose credential is bound at the peer (its test endpoint makes the bind link).
    static func boundAtPeer(_ issuer: URL, directory: URL, transport: HTTP1Transport, name: String) async throws -> ProviderBenchmark.Client {
        let embedded = try ProviderBenchmark.Client.device(issuer: issuer, directory: directory, transport: transport)
        let response = try await transport.send(TransportRequest(
            method: "POST", url: issuer.appendingPathComponent("test/identities"), headers: ["Content-Type": "application/json"],
            body: try JSONEncoder().encode(["username": name])
        ))
        guard response.status == 201, let object = try? JSONValue(json: response.body), let text = object["bindURL"]?.stringValue, let bindURL = URL(string: text) else {
            throw BenchmarkError("the peer did not create \(name) (\(response.status))")
        }
        _ = try await embedded.registerCredential(from: bindURL)
        let redirect = try ProviderBenchmark.Client.device(issuer: issuer, directory: directory, transport: transport, signInFlow: .redirect)
        return ProviderBenchmark.Client(issuer: issuer, embedded: embedded, redirect: redirect)
    }
}
