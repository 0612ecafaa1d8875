import Foundation
import Hummingbird
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyWebAuthn

/// Full authentications against the in-process reference provider (authorize → request
/// options → assertion → token → ID-token validation: four HTTP round trips) at 1, 4 and
/// 16 concurrent clients, each next to its floor measured in the same run: the same four
/// round trips to a bare endpoint (`/health`) plus the same signature operations (two
/// ES256 signatures and two verifications).
///
/// Each client has its own vault on /dev/shm when there is one, so the figure is the
/// protocol's and not the disk's (a vault on disk adds an fsync per assertion).
struct ProviderBenchmark {
    var seconds: Double

    struct Figures {
        var throughput: Double
        var p50: Double
        var p99: Double
    }

    func run() async throws -> Report {
        let root = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        let scratch = URL(fileURLWithPath: root).appendingPathComponent("latchkey-bench-idp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: scratch) }

        var configuration = ProviderConfiguration(adminToken: "bench")
        configuration.rateLimitPerMinute = .max
        configuration.logLevel = .warning
        return try await withReferenceProvider(configuration: configuration) { issuer in
            let transport = URLSessionTransport()
            var bound: [Client] = []
            for index in 0..<16 {
                bound.append(try await Client.bound(issuer: issuer, directory: scratch.appendingPathComponent("client-\(index)"), transport: transport, name: "user-\(index)"))
            }
            let clients = bound
            let floorKey = try SigningKey.generate(.es256)
            var report = Report(title: "Reference provider: full authentications vs floor (4 bare round trips + 2 signs + 2 verifies)")
            report.notes = ["vaults on \(root); latency in ms; targets: p50 <= 1.5x floor, throughput at 16 >= 0.6x floor"]
            for concurrency in [1, 4, 16] {
                let full = try await measure(concurrency: concurrency) { index in try await clients[index].authenticate() }
                let floor = try await measure(concurrency: concurrency) { _ in
                    for _ in 0..<4 {
                        _ = try await transport.send(TransportRequest(method: "GET", url: issuer.appendingPathComponent("health")))
                    }
                    let message = Data(repeating: 1, count: 100)
                    for _ in 0..<2 {
                        let signature = try floorKey.signature(for: message)
                        _ = floorKey.publicKey.isValidSignature(signature, for: message)
                    }
                }
                report.lines.append(ReportLine(name: "\(concurrency) client(s): auth/s", latchkey: full.throughput, reference: floor.throughput, referenceName: "floor/s", target: concurrency == 16 ? ">= 0.6x" : "-"))
                report.lines.append(ReportLine(name: "\(concurrency) client(s): p50 ms", latchkey: full.p50, reference: floor.p50, referenceName: "floor p50", target: "<= 1.5x"))
                report.lines.append(ReportLine(name: "\(concurrency) client(s): p99 ms", latchkey: full.p99, reference: floor.p99, referenceName: "floor p99", target: "-"))
            }
            return report
        }
    }

    /// Runs `operation` in `concurrency` tasks for the time budget; throughput and latency.
    private func measure(concurrency: Int, _ operation: @escaping @Sendable (Int) async throws -> Void) async throws -> Figures {
        for index in 0..<concurrency { try await operation(index) }  // warm-up
        let budget = Duration.milliseconds(Int64(seconds * 1000))
        let clock = ContinuousClock()
        let start = clock.now
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for index in 0..<concurrency {
                group.addTask {
                    var samples: [Double] = []
                    while clock.now - start < budget {
                        let begin = clock.now
                        try await operation(index)
                        let (whole, atto) = (clock.now - begin).components
                        samples.append(Double(whole) * 1000 + Double(atto) / 1e15)
                    }
                    return samples
                }
            }
            return try await group.reduce(into: [Double]()) { $0 += $1 }.sorted()
        }
        let (whole, atto) = (clock.now - start).components
        let elapsed = Double(whole) + Double(atto) / 1e18
        func percentile(_ p: Double) -> Double {
            latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
        }
        return Figures(throughput: Double(latencies.count) / elapsed, p50: percentile(0.5), p99: percentile(0.99))
    }

    /// One client: its own vault and credential, and an OAuth client.
    struct Client: Sendable {
        let issuer: URL
        let origin: String
        let authenticator: SoftwareAuthenticator
        let oauth: OAuthClient
        let transport: URLSessionTransport

        static func bound(issuer: URL, directory: URL, transport: URLSessionTransport, name: String) async throws -> Client {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let keyFile = directory.appendingPathComponent("key")
            guard FileManager.default.createFile(atPath: keyFile.path, contents: try SecureRandom.bytes(count: 32), attributes: [.posixPermissions: 0o600]) else {
                throw BenchmarkError("cannot write a key file")
            }
            let authenticator = SoftwareAuthenticator(vault: try KeyVault.open(at: directory.appendingPathComponent("vault"), key: .keyFile(keyFile)))
            let origin = "\(issuer.scheme ?? "http")://\(issuer.host ?? "")" + (issuer.port.map { ":\($0)" } ?? "")
            let created = try await json(transport, "POST", issuer.appendingPathComponent("admin/identities"), ["username": name], admin: true)
            let job = try await json(transport, "GET", try url(created["bindURL"]), nil)
            let (registration, _) = try authenticator.makeCredential(PublicKeyCredentialCreationOptionsJSON(json: JSONSerialization.data(withJSONObject: job)), origin: origin)
            _ = try await json(transport, "POST", try url(job["submit"]), try JSONSerialization.jsonObject(with: registration.json()) as? [String: Any])
            guard let redirect = URL(string: "http://127.0.0.1/callback") else { throw BenchmarkError("redirect URI") }
            let oauth = try OAuthClient(configuration: .init(issuer: issuer, clientID: "latchkey-cli", redirectURI: redirect, transport: transport))
            return Client(issuer: issuer, origin: origin, authenticator: authenticator, oauth: oauth, transport: transport)
        }

        /// One full authentication, ending with a validated ID token.
        func authenticate() async throws {
            let request = try await oauth.authorizationRequest()
            let answer = try await Self.json(transport, "GET", request.url, nil, accept: true)
            let authenticateURL = try Self.url(answer["authenticateURL"])
            let options = try await Self.json(transport, "GET", authenticateURL, nil)
            let (assertion, _) = try authenticator.getAssertion(PublicKeyCredentialRequestOptionsJSON(json: JSONSerialization.data(withJSONObject: options)), origin: origin)
            let redirect = try await Self.json(transport, "POST", authenticateURL, try JSONSerialization.jsonObject(with: assertion.json()) as? [String: Any])
            let code = try await oauth.authorizationCode(from: try Self.url(redirect["redirectURL"]), for: request)
            let tokens = try await oauth.exchange(code: code, for: request)
            guard tokens.idTokenClaims != nil else { throw BenchmarkError("no ID token") }
        }

        static func url(_ value: Any?) throws -> URL {
            guard let text = value as? String, let url = URL(string: text) else { throw BenchmarkError("expected a URL") }
            return url
        }

        static func json(_ transport: URLSessionTransport, _ method: String, _ url: URL, _ body: [String: Any]?, admin: Bool = false, accept: Bool = false) async throws -> [String: Any] {
            var headers: [String: String] = [:]
            if admin { headers["Authorization"] = "Bearer bench" }
            if accept { headers["Accept"] = "application/json" }
            var data: Data?
            if let body {
                headers["Content-Type"] = "application/json"
                data = try JSONSerialization.data(withJSONObject: body)
            }
            let response = try await transport.send(TransportRequest(method: method, url: url, headers: headers, body: data))
            guard (200..<300).contains(response.status), let object = try JSONSerialization.jsonObject(with: response.body) as? [String: Any] else {
                throw BenchmarkError("\(method) \(url.path) answered \(response.status)")
            }
            return object
        }
    }
}
