import Foundation
import Latchkey
import LatchkeyOAuth
import LatchkeyTestSupport
import Synchronization

/// Latchkey's provider next to a compiled peer doing the same work (issue 77,
/// docs/PERFORMANCE.md "A Go peer"): `../shared/peers/go-provider` (net/http, duo-labs
/// WebAuthn, golang-jwt, SQLite through database/sql), built by its own `build.sh` when the
/// folder is there. With `--durable DIR` the peer does per sign-in what `latchkey serve
/// --data-dir` does (the same statements in one read and two write transactions, WAL with
/// `synchronous=FULL`, group commit, hashed codes and tokens, audit rows with their HMAC and
/// a sealer, a refresh family, a per-address limiter, two log lines); without it, maps
/// behind a lock.
///
/// Every server runs at once and the same clients (the redirect flow: authorize, options,
/// assertion, token with the ID token checked) take turns at them, round after round, the
/// order reversed every other round so drift falls on both. CPU per sign-in is read from
/// /proc; each line is the median of the rounds, and the ratio the median of the rounds'
/// own ratios. Each turn at an in-memory server also measures four bare requests
/// (`/health`), the HTTP a sign-in travels in, so the report shows how much of the
/// difference is the requests and how much the sign-in's own work; a server of SwiftNIO
/// alone (``BareHTTPServer``) answers the same four requests in the same rounds, which
/// parts that difference into SwiftNIO's share and what the provider's request path adds.
/// User-space CPU is reported apart too: the kernel's share of loopback TCP is much the
/// same whichever server answers. The clients' connections come from many loopback addresses, a new one every
/// 200 connections, as a provider's clients come from many hosts: the peer keeps its limit
/// of 120 POSTs a minute per address (it has no switch), and `latchkey serve` its own
/// limiter, set high, so both count per address and neither refuses.
struct GoPeerBenchmark {
    var seconds: Double
    var concurrencies = [1, 16, 64]
    var rounds = 5
    /// Whether the in-memory pair's turns also measure four bare requests (`--no-floor`
    /// leaves them out, so a profile of a server holds its sign-ins only).
    var floor = true

    /// The peer's build script, beside the checkout (`../shared/peers/go-provider`).
    static let buildScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/peers/go-provider/build.sh")

    /// One server (or two sharing a store) and the clients bound at it.
    private struct Contender {
        var name: String
        var servers: [ServeProcess]
        var clients: [ProviderBenchmark.Client]
        /// Whether each turn also measures four bare requests.
        var measuresFloor = false
        /// A server that only answers bare requests (SwiftNIO alone): its turns measure
        /// nothing else.
        var floorOnly = false
        /// All CPU seconds and those in user space, one read of /proc per server.
        var cpuTimes: (all: Double, user: Double) {
            servers.reduce((0, 0)) { sum, server in
                let times = server.cpuTimes
                return (sum.0 + times.user + times.system, sum.1 + times.user)
            }
        }
    }

    /// What one turn at one contender measured.
    private struct Turn {
        var cpuPerSignIn: Double
        /// The part of ``cpuPerSignIn`` spent in user space.
        var userPerSignIn: Double
        var throughput: Double
        var p50: Double
        var p99: Double
        /// CPU milliseconds of four bare requests, for the in-memory pair and SwiftNIO alone.
        var floorCPU: Double?
        /// The part of ``floorCPU`` spent in user space.
        var floorUser: Double?
    }

    func run() async throws -> Report {
        var report = Report(title: "Latchkey's provider next to a Go peer doing the same work (net/http, duo-labs WebAuthn, SQLite): server CPU from /proc")
        guard FileManager.default.isExecutableFile(atPath: Self.buildScript.path) else {
            report.notes.append("Go peer: skipped (\(Self.buildScript.path) is not on this machine)")
            return report
        }
        let binary = try Self.buildPeer()
        let scratch = URL(fileURLWithPath: try makeScratchDirectory(under: NSTemporaryDirectory()))
        defer { try? FileManager.default.removeItem(at: scratch) }
        let transport = HTTP1Transport(sourceAddress: LoopbackSources().next)
        let count = concurrencies.max() ?? 1
        let users = (0..<count).map { "bench-\($0)" }

        var contenders: [Contender] = []
        var database: PostgresBenchDatabase?
        defer {
            for contender in contenders { contender.servers.forEach { $0.stop() } }
        }
        func add(
            _ name: String, _ servers: [ServeProcess], measuresFloor: Bool, bind: (Int, URL) async throws -> ProviderBenchmark.Client
        ) async throws {
            contenders.append(Contender(name: name, servers: servers, clients: [], measuresFloor: measuresFloor))
            var clients: [ProviderBenchmark.Client] = []
            for index in 0..<count {
                clients.append(try await bind(index, scratch.appendingPathComponent("\(name)-\(index)")))
            }
            contenders[contenders.count - 1].clients = clients
        }
        func latchkey(_ name: String, _ servers: [ServeProcess], measuresFloor: Bool = false) async throws {
            try await add(name, servers, measuresFloor: measuresFloor) { index, directory in
                try await ProviderBenchmark.Client.bound(
                    issuer: servers[index % servers.count].issuer, directory: directory, transport: transport, name: users[index]
                )
            }
        }
        func peer(_ name: String, _ arguments: [String], measuresFloor: Bool = false) async throws {
            let (server, bindURLs) = try Self.startPeer(binary, arguments: arguments, users: users)
            try await add(name, [server], measuresFloor: measuresFloor) { index, directory in
                try await Self.bound(at: server.issuer, bindURL: bindURLs[users[index]], directory: directory, transport: transport)
            }
        }
        try await latchkey("Latchkey SQLite", [ServeProcess.start(["--port", "0", "--data-dir", scratch.appendingPathComponent("latchkey-store").path])])
        try await peer("Go peer --durable", ["--durable", scratch.appendingPathComponent("peer-store").path])
        try await latchkey("Latchkey in memory", [ServeProcess.start(["--port", "0"])], measuresFloor: true)
        try await peer("Go peer in memory", [], measuresFloor: true)
        var postgresIndex: Int?
        var bareIndex: Int?
        if floor {
            bareIndex = contenders.count
            contenders.append(Contender(name: "SwiftNIO alone", servers: [try BareHTTPServer.start()], clients: [], measuresFloor: true, floorOnly: true))
        }
        if let url = ProcessInfo.processInfo.environment["LATCHKEY_BENCH_POSTGRES_URL"], !url.isEmpty {
            let created = try await PostgresBenchDatabase.create(url)
            database = created
            let keyFile = scratch.appendingPathComponent("store.key")
            guard FileManager.default.createFile(atPath: keyFile.path, contents: try randomKey(), attributes: [.posixPermissions: 0o600]) else {
                throw BenchmarkError("cannot write the store key")
            }
            let servers = try (0..<2).map { _ in
                try ServeProcess.start(["--port", "0", "--store-key-file", keyFile.path], environment: created.environment)
            }
            postgresIndex = contenders.count
            try await latchkey("Latchkey PostgreSQL, 2 instances", servers)
        } else {
            report.notes.append("PostgreSQL: skipped (LATCHKEY_BENCH_POSTGRES_URL is not set; scripts/performance-report.sh sets it)")
        }

        report.notes = [
            "the redirect flow at each (four round trips, the ID token checked), \(count) users each, the same clients; \(rounds) rounds of \(seconds) s per server and client count, taking turns",
            "CPU in server milliseconds per sign-in (the two PostgreSQL instances together; PostgreSQL's own CPU is not counted), latency in ms; each figure the median of the rounds, each CPU ratio the median of the rounds' ratios",
            "Go peer: .build/go-peer/peer_go (Go 1.19 from Debian); --durable: SQLite WAL, synchronous=FULL, audit log, limiter, refresh tokens, logs",
        ] + report.notes
        let turn = ProviderBenchmark(seconds: seconds)
        for concurrency in concurrencies {
            var turns = [[Turn]](repeating: [], count: contenders.count)
            for round in 0..<rounds {
                let order = round % 2 == 0 ? Array(contenders.indices) : contenders.indices.reversed()
                for index in order {
                    let contender = contenders[index]
                    var measured = Turn(cpuPerSignIn: 0, userPerSignIn: 0, throughput: 0, p50: 0, p99: 0)
                    if !contender.floorOnly {
                        let before = contender.cpuTimes
                        let clients = contender.clients
                        let figures = try await turn.measure(concurrency: concurrency) { try await clients[$0].authenticate(flow: .redirect) }
                        guard figures.errors == 0 else {
                            throw BenchmarkError("\(contender.name), \(concurrency) clients: \(figures.errors) sign-ins failed, the first: \(figures.firstError ?? "-")")
                        }
                        let signIns = Double(max(figures.count + concurrency, 1))
                        let after = contender.cpuTimes
                        measured = Turn(
                            cpuPerSignIn: (after.all - before.all) * 1000 / signIns,
                            userPerSignIn: (after.user - before.user) * 1000 / signIns,
                            throughput: figures.throughput, p50: figures.p50, p99: figures.p99
                        )
                    }
                    if contender.measuresFloor, floor {
                        // Four bare requests (`/health`), the HTTP a sign-in travels in.
                        let issuer = contender.servers[0].issuer
                        let before = contender.cpuTimes
                        let floor = try await turn.measure(concurrency: concurrency) { _ in
                            try await ProviderBenchmark.bareRequests(to: issuer, transport: transport)
                        }
                        let rounds = Double(max(floor.count + concurrency, 1))
                        let after = contender.cpuTimes
                        measured.floorCPU = (after.all - before.all) * 1000 / rounds
                        measured.floorUser = (after.user - before.user) * 1000 / rounds
                    }
                    turns[index].append(measured)
                }
            }
            // Pairs: Latchkey on SQLite against the durable peer, in memory against the
            // peer in memory; PostgreSQL beside the durable peer, without a target.
            let pairs: [(ours: Int, theirs: Int, cpuTarget: Double?, p99Target: Double?)] = [
                (0, 1, 1.0, concurrency == 16 ? 1.0 : nil),
                (2, 3, 1.5, nil),
            ] + (postgresIndex.map { [($0, 1, nil, nil)] } ?? [])
            for pair in pairs {
                let ours = turns[pair.ours], theirs = turns[pair.theirs]
                let label = "\(contenders[pair.ours].name) vs \(contenders[pair.theirs].name), \(concurrency) clients"
                let reference = contenders[pair.theirs].name
                report.lines.append(ReportLine(
                    name: "\(label): CPU ms/sign-in", latchkey: Self.median(ours.map(\.cpuPerSignIn)), reference: Self.median(theirs.map(\.cpuPerSignIn)),
                    referenceName: "\(reference) CPU ms/sign-in", target: pair.cpuTarget.map { .ratioAtMost($0) },
                    pairedRatio: Self.median(zip(ours, theirs).map { $0.cpuPerSignIn / max($1.cpuPerSignIn, 1e-9) })
                ))
                report.lines.append(ReportLine(
                    name: "\(label): user-space CPU ms/sign-in", latchkey: Self.median(ours.map(\.userPerSignIn)),
                    reference: Self.median(theirs.map(\.userPerSignIn)), referenceName: "\(reference), the same",
                    pairedRatio: Self.median(zip(ours, theirs).map { $0.userPerSignIn / max($1.userPerSignIn, 1e-9) })
                ))
                report.lines.append(ReportLine(
                    name: "\(label): sign-ins/s", latchkey: Self.median(ours.map(\.throughput)), reference: Self.median(theirs.map(\.throughput)),
                    referenceName: "\(reference) sign-ins/s"
                ))
                report.lines.append(ReportLine(
                    name: "\(label): p50 ms", latchkey: Self.median(ours.map(\.p50)), reference: Self.median(theirs.map(\.p50)), referenceName: "\(reference) p50"
                ))
                report.lines += Self.floorLines(label, ours: ours, theirs: theirs, reference: reference)
                report.lines.append(ReportLine(
                    name: "\(label): p99 ms", latchkey: Self.median(ours.map(\.p99)), reference: Self.median(theirs.map(\.p99)),
                    referenceName: "\(reference) p99", target: pair.p99Target.map { .ratioAtMost($0) }
                ))
            }
            // SwiftNIO alone beside both in-memory servers: how much of the four bare
            // requests' cost is SwiftNIO's, and how much the provider's request path adds.
            if let bareIndex {
                let bare = turns[bareIndex]
                report.lines += Self.floorLines("Latchkey in memory vs SwiftNIO alone, \(concurrency) clients", ours: turns[2], theirs: bare, reference: "SwiftNIO alone")
                report.lines += Self.floorLines("SwiftNIO alone vs Go peer in memory, \(concurrency) clients", ours: bare, theirs: turns[3], reference: "Go peer in memory")
                // A bound, not a measurement: each sign-in less what its four requests cost
                // Latchkey over SwiftNIO alone in the same round, as if the request path
                // cost nothing beyond SwiftNIO's; what is left is the sign-in's own work.
                for (ours, theirs, name) in [(0, 1, "Latchkey SQLite"), (2, 3, "Latchkey in memory")] {
                    let bounds = (0..<rounds).compactMap { round -> (Double, Double)? in
                        guard let floor = turns[2][round].floorCPU, let nio = bare[round].floorCPU else { return nil }
                        return (turns[ours][round].cpuPerSignIn - (floor - nio), turns[theirs][round].cpuPerSignIn)
                    }
                    guard !bounds.isEmpty else { continue }
                    report.lines.append(ReportLine(
                        name: "\(name) vs \(contenders[theirs].name), \(concurrency) clients: CPU ms/sign-in with requests at SwiftNIO's cost (bound)",
                        latchkey: Self.median(bounds.map(\.0)), reference: Self.median(bounds.map(\.1)),
                        referenceName: "\(contenders[theirs].name) CPU ms/sign-in",
                        pairedRatio: Self.median(bounds.map { $0 / max($1, 1e-9) })
                    ))
                }
            }
        }
        for contender in contenders { contender.servers.forEach { $0.stop() } }
        contenders = []
        try await database?.drop()
        return report
    }

    /// Four bare requests at two servers, all CPU and user space alone, when both measured them.
    private static func floorLines(_ label: String, ours: [Turn], theirs: [Turn], reference: String) -> [ReportLine] {
        var lines: [ReportLine] = []
        for (name, figure) in [("CPU ms of 4 bare requests", \Turn.floorCPU), ("user-space CPU ms of 4 bare requests", \Turn.floorUser)] {
            let pairs = zip(ours, theirs).compactMap { ours, theirs -> (Double, Double)? in
                guard let a = ours[keyPath: figure], let b = theirs[keyPath: figure] else { return nil }
                return (a, b)
            }
            guard !pairs.isEmpty else { continue }
            lines.append(ReportLine(
                name: "\(label): \(name)", latchkey: median(pairs.map(\.0)), reference: median(pairs.map(\.1)),
                referenceName: "\(reference), the same", pairedRatio: median(pairs.map { $0 / max($1, 1e-9) })
            ))
        }
        return lines
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// Builds the peer with its own script (which installs Debian's Go packages when
    /// missing) into `.build/go-peer`, so a second run reuses Go's build cache.
    static func buildPeer() throws -> URL {
        let out = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/go-peer")
        let pipe = Pipe()
        let build = try SpawnedProcess(
            URL(fileURLWithPath: "/bin/bash"), [buildScript.path],
            environment: ProcessInfo.processInfo.environment.merging(["PEER_GO_OUT": out.path]) { $1 }, stdout: .pipe(pipe), stderr: .inherit
        )
        let printed = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        build.waitUntilExit()
        guard build.terminationStatus == 0, let path = printed.split(separator: "\n").last.map(String.init),
              FileManager.default.isExecutableFile(atPath: path) else {
            throw BenchmarkError("the Go peer did not build (\(buildScript.path) exited with \(build.terminationStatus ?? -1))")
        }
        return URL(fileURLWithPath: path)
    }

    /// Starts the peer on a free port with `users`, and reads its line: the issuer and a
    /// bind URL for each user.
    static func startPeer(_ binary: URL, arguments: [String], users: [String]) throws -> (ServeProcess, [String: URL]) {
        let output = Pipe()
        let process = try SpawnedProcess(binary, arguments + [String(try LoopbackPort.free())] + users, stdout: .pipe(output))
        let (server, line) = try ServeProcess.ready(process, output: output, name: "the Go peer \(arguments.joined(separator: " "))")
        guard case .object(let bind)? = line["bind"] else {
            process.terminate()
            throw BenchmarkError("the Go peer \(arguments.joined(separator: " ")) gave no bind URLs")
        }
        let bindURLs = bind.compactMapValues { $0.stringValue.flatMap(URL.init(string:)) }
        guard users.allSatisfy({ bindURLs[$0] != nil }) else {
            process.terminate()
            throw BenchmarkError("the Go peer gave no bind URL for some users")
        }
        return (server, bindURLs)
    }

    /// A client whose credential is bound from the peer's bind URL.
    static func bound(at issuer: URL, bindURL: URL?, directory: URL, transport: HTTP1Transport) async throws -> ProviderBenchmark.Client {
        guard let bindURL else { throw BenchmarkError("no bind URL") }
        let embedded = try ProviderBenchmark.Client.device(issuer: issuer, directory: directory, transport: transport)
        _ = try await embedded.registerCredential(from: bindURL)
        let redirect = try ProviderBenchmark.Client.device(issuer: issuer, directory: directory, transport: transport, signInFlow: .redirect)
        return ProviderBenchmark.Client(issuer: issuer, embedded: embedded, redirect: redirect)
    }
}

/// Loopback source addresses for the benchmark's connections: 127.1.0.0 onwards, the next
/// one every 200 connections (50 sign-ins of four requests, fewer POSTs per endpoint than
/// the Go peer's 120 a minute per address).
final class LoopbackSources: Sendable {
    private let connections = Atomic<Int>(0)

    @Sendable func next() -> String? {
        let block = connections.add(1, ordering: .relaxed).oldValue / 200
        return "127.\(1 + (block >> 16) % 254).\((block >> 8) & 0xff).\(block & 0xff)"
    }
}
