import Foundation
import Latchkey
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import Logging

/// Full authentications, as an application runs them (`Embedded.authenticate`: by default
/// over the authorization challenge endpoint — request → options, assertion → code, token →
/// ID-token validation, three HTTP round trips — and, for comparison in the same run, over
/// the redirect flow: authorize → request options → assertion → token, four),
/// against the in-process reference provider at 1, 4, 16 and 64 concurrent clients, each
/// next to its floor measured in the same run: the same four round trips to a bare
/// endpoint (`/health`) plus the same signature operations (two ES256 signatures and two
/// verifications). This is also the load test: it counts failed authentications (which
/// must be none) and reports the process's peak memory.
///
/// Each client has its own vault on /dev/shm when there is one, so the figure is the
/// protocol's and not the disk's (a vault on disk adds an fsync per assertion).
struct ProviderBenchmark {
    var seconds: Double
    static let concurrencies = [1, 4, 16, 64]
    var concurrencies = Self.concurrencies
    /// Whether to measure the floor next to each figure (off only for profiling).
    var floor = true

    struct Figures {
        var throughput: Double
        /// Operations that succeeded in the measured time (the warm-up not counted).
        var count = 0
        var p50: Double
        var p99: Double
        var errors: Int
        var firstError: String?
    }

    /// The in-process provider without request limits, and a scratch directory for the
    /// clients' vaults (on /dev/shm when there is one, named by `root`), for `body`.
    static func withProvider<Result: Sendable>(
        configure: (inout ProviderConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (_ issuer: URL, _ scratch: URL, _ root: String) async throws -> Result
    ) async throws -> Result {
        let root = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        let scratch = URL(fileURLWithPath: try makeScratchDirectory(under: root))
        defer { try? FileManager.default.removeItem(at: scratch) }
        var configuration = ProviderConfiguration(adminToken: ServeProcess.adminToken)
        configuration.rateLimitPerMinute = .max
        configuration.logLevel = .warning
        configuration.auditLog = !ServeProcess.auditOff
        configure(&configuration)
        return try await withReferenceProvider(configuration: configuration) { issuer in try await body(issuer, scratch, root) }
    }

    func run() async throws -> Report {
        let memoryBefore = PeakMemory.current()
        var report = try await Self.withProvider { issuer, scratch, root in
            let transport = HTTP1Transport()
            var bound: [Client] = []
            for index in 0..<(concurrencies.max() ?? 1) {
                bound.append(try await Client.bound(issuer: issuer, directory: scratch.appendingPathComponent("client-\(index)"), transport: transport, name: "user-\(index)"))
            }
            let clients = bound
            let floorKey = try SigningKey.generate(.es256)
            var report = Report(title: "Reference provider: full authentications (Embedded.authenticate, challenge flow) vs floor (4 bare round trips + 2 signs + 2 verifies); the redirect flow beside it")
            report.notes = ["vaults on \(root); latency in ms; targets: p50 <= 1.5x floor, throughput at 16 >= 0.6x floor, 0 errors"]
            for concurrency in concurrencies {
                let full = try await measure(concurrency: concurrency) { index in try await clients[index].authenticate() }
                guard self.floor else {
                    report.lines.append(ReportLine(name: "\(concurrency) client(s): auth/s", latchkey: full.throughput, reference: nil, referenceName: "no floor"))
                    continue
                }
                let floor = try await measure(concurrency: concurrency) { _ in
                    try await Self.bareRequests(to: issuer, transport: transport)
                    let message = Data(repeating: 1, count: 100)
                    for _ in 0..<2 {
                        let signature = try floorKey.signature(for: message)
                        _ = floorKey.publicKey.isValidSignature(signature, for: message)
                    }
                }
                report.lines.append(ReportLine(name: "\(concurrency) client(s): auth/s", latchkey: full.throughput, reference: floor.throughput, referenceName: "floor/s", target: concurrency == 16 ? .ratioAtLeast(0.6) : nil))
                report.lines.append(ReportLine(name: "\(concurrency) client(s): p50 ms", latchkey: full.p50, reference: floor.p50, referenceName: "floor p50", target: .ratioAtMost(1.5)))
                report.lines.append(ReportLine(name: "\(concurrency) client(s): p99 ms", latchkey: full.p99, reference: floor.p99, referenceName: "floor p99"))
                report.lines.append(ReportLine(name: "\(concurrency) client(s): errors", latchkey: Double(full.errors), reference: nil, referenceName: "floor errors: \(floor.errors)", target: .atMost(0)))
                if concurrency == 1 || concurrency == 16 {
                    // The redirect flow beside the challenge flow (draft-ietf-oauth-first-party-apps), same clients, same run.
                    let redirect = try await measure(concurrency: concurrency) { index in try await clients[index].authenticate(flow: .redirect) }
                    report.lines.append(ReportLine(name: "\(concurrency) client(s): redirect-flow auth/s", latchkey: redirect.throughput, reference: full.throughput, referenceName: "challenge-flow auth/s"))
                    report.lines.append(ReportLine(name: "\(concurrency) client(s): redirect-flow p50 ms", latchkey: redirect.p50, reference: full.p50, referenceName: "challenge-flow p50"))
                    report.lines.append(ReportLine(name: "\(concurrency) client(s): redirect-flow errors", latchkey: Double(redirect.errors), reference: nil, referenceName: "", target: .atMost(0)))
                }
                if let first = full.firstError ?? floor.firstError { report.notes.append("first error at \(concurrency) clients: \(first)") }
            }
            return report
        }
        let peak = PeakMemory.current()
        report.notes.append(String(format: "peak memory (max RSS of the process: provider and clients): %.1f MiB before, %.1f MiB after", memoryBefore.mebibytes, peak.mebibytes))
        return report
    }

    /// The HTTP a sign-in travels in, without the sign-in: four round trips to the bare
    /// `/health` endpoint, the floor several groups measure beside their sign-ins.
    static func bareRequests(to issuer: URL, transport: HTTP1Transport) async throws {
        for _ in 0..<4 {
            _ = try await transport.send(TransportRequest(method: "GET", url: issuer.appendingPathComponent("health")))
        }
    }

    /// Runs `operation` in `concurrency` tasks for the time budget; throughput, latency
    /// and errors. A failed operation is counted and the task goes on.
    func measure(concurrency: Int, _ operation: @escaping @Sendable (Int) async throws -> Void) async throws -> Figures {
        for index in 0..<concurrency { try await operation(index) }  // warm-up
        let budget = Duration.milliseconds(Int64(seconds * 1000))
        let clock = ContinuousClock()
        let start = clock.now
        let results = await withTaskGroup(of: ([Double], Int, String?).self) { group in
            for index in 0..<concurrency {
                group.addTask {
                    var samples: [Double] = []
                    var errors = 0
                    var firstError: String?
                    while clock.now - start < budget {
                        let begin = clock.now
                        do {
                            try await operation(index)
                            let (whole, atto) = (clock.now - begin).components
                            samples.append(Double(whole) * 1000 + Double(atto) / 1e15)
                        } catch {
                            errors += 1
                            if firstError == nil { firstError = "\(error)" }
                        }
                    }
                    return (samples, errors, firstError)
                }
            }
            return await group.reduce(into: ([Double](), 0, String?.none)) { total, part in
                total.0 += part.0
                total.1 += part.1
                total.2 = total.2 ?? part.2
            }
        }
        let (whole, atto) = (clock.now - start).components
        let elapsed = Double(whole) + Double(atto) / 1e18
        let latencies = results.0.sorted()
        func percentile(_ p: Double) -> Double {
            latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
        }
        return Figures(throughput: Double(latencies.count) / elapsed, count: latencies.count, p50: percentile(0.5), p99: percentile(0.99), errors: results.1, firstError: results.2)
    }

    /// One client: its own vault, bound once, and the facade an application would use.
    struct Client: Sendable {
        let issuer: URL
        let embedded: Embedded
        /// The same vault, signing in over the redirect flow.
        var redirect: Embedded?

        static func bound(
            issuer: URL, directory: URL, transport: HTTP1Transport, name: String, email: String? = nil, stepHandler: Embedded.StepHandler? = nil
        ) async throws -> Client {
            let embedded = try device(issuer: issuer, directory: directory, transport: transport, stepHandler: stepHandler)
            let admin = AdminAPIClient(issuer: issuer, token: ServeProcess.adminToken, transport: transport)
            let response = try await admin.call(AdminAPI.createIdentity, body: AdminAPI.IdentityCreation(username: name, email: email))
            guard response.status == 201, let created = response.answer, let bindURL = URL(string: created.bindURL) else {
                throw BenchmarkError("the provider did not create \(name) (\(response.status))")
            }
            _ = try await embedded.registerCredential(from: bindURL)
            let redirect = try device(issuer: issuer, directory: directory, transport: transport, stepHandler: stepHandler, signInFlow: .redirect)
            return Client(issuer: issuer, embedded: embedded, redirect: redirect)
        }

        /// A device: an `Embedded` with an empty vault in `directory`, under a key file.
        /// A device: an `Embedded` over the vault in `directory` (made, with its key file,
        /// the first time).
        static func device(
            issuer: URL, directory: URL, transport: HTTP1Transport, stepHandler: Embedded.StepHandler? = nil, signInFlow: SignInFlow = .automatic
        ) throws -> Embedded {
            let keyFile = try vaultKeyFile(in: directory)
            var configuration = Embedded.Configuration(
                vaultDirectory: directory.appendingPathComponent("vault"), keySource: .keyFile(keyFile),
                allowedDomains: [issuer.host ?? ""], transport: transport
            )
            configuration.stepHandler = stepHandler
            configuration.signInFlow = signInFlow
            return try Embedded(configuration: configuration)
        }

        /// One full authentication, ending with a validated ID token; `flow` `.redirect`
        /// over the redirect flow.
        func authenticate(flow: SignInFlow = .automatic) async throws {
            guard let redirectURI = URL(string: "http://127.0.0.1/callback") else { throw BenchmarkError("redirect URI") }
            let facade = flow == .redirect ? (redirect ?? embedded) : embedded
            let tokens = try await facade.authenticate(issuer: issuer, clientID: "latchkey-cli", redirectURI: redirectURI)
            guard tokens.claims != nil else { throw BenchmarkError("no ID token") }
        }
    }
}
