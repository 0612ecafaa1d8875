import Foundation
import Latchkey
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport

/// The hosts' directory (issue 73), against references measured in the same run, on a
/// `latchkey serve` process (in-memory store) holding 10,000 POSIX accounts in 1,000
/// groups, all granted to the benchmark's host:
/// - the server's CPU (from /proc) for one host reading the whole directory (every page at
///   the default limit), per 100 accounts, next to its CPU per token refresh, in
///   alternating rounds;
/// - a host asking whether anything changed (`If-None-Match`, answered 304), next to a bare
///   request (`GET /healthz`, no token, no store), as the host sees it (median latency of
///   alternating rounds on one connection) and as the server pays it (CPU).
struct FleetBenchmark {
    var seconds: Double
    var accounts = 10_000
    var groups = 1_000

    func run() async throws -> Report {
        let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("latchkey-bench-fleet-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: scratch) }
        let server = try ServeProcess.start(["--port", "0"])
        defer { server.stop() }
        var report = Report(title: "Fleet: the hosts' directory (\(accounts) accounts, \(groups) groups)")
        report.notes = [
            "server CPU from /proc of a latchkey serve process (in-memory store), alternating rounds",
            "a walk reads every page at the default limit (\(HostDirectoryPage.defaultLimit) entries)",
            "latencies are medians of alternating rounds from one client",
        ]
        let transport = HTTP1Transport()
        try await seed(server.issuer, transport: transport)
        let token = try await hostToken(server.issuer)
        try await directoryCPU(server: server, scratch: scratch, token: token, transport: transport, into: &report)
        try await notModified(server: server, token: token, transport: transport, into: &report)
        return report
    }

    /// The accounts and groups, through the admin API, eight requests at a time.
    func seed(_ issuer: URL, transport: HTTP1Transport) async throws {
        let admin = AdminAPIClient(issuer: issuer, token: ServeProcess.adminToken, transport: transport)
        @Sendable func require<Answer>(_ reply: AdminAPIClient.Reply<Answer>, _ what: String) throws {
            guard (200..<300).contains(reply.status) else { throw BenchmarkError("\(what): HTTP \(reply.status) \(String(decoding: reply.body, as: UTF8.self))") }
        }
        try await Self.inParallel(groups) { index in
            try require(try await admin.call(AdminAPI.createGroup, body: .init(name: "group\(index)")), "create-group")
            try require(try await admin.call(AdminAPI.grantHostAccess, "web", "group\(index)", body: .init(sudo: index % 10 == 0)), "grant-host-access")
        }
        try await Self.inParallel(accounts) { index in
            let name = "user\(index)"
            try require(try await admin.call(AdminAPI.createIdentity, body: .init(username: name)), "create-identity")
            try require(try await admin.call(AdminAPI.setPOSIXAccount, name, body: .init()), "set-posix")
            try require(try await admin.call(AdminAPI.addGroupMember, "group\(index % groups)", name), "add-member")
        }
    }

    private static func inParallel(_ count: Int, _ work: @escaping @Sendable (Int) async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in stride(from: worker, to: count, by: 8) { try await work(index) }
                }
            }
            try await group.waitForAll()
        }
    }

    /// A host client labelled `web` and its client credentials token of scope `host`.
    private func hostToken(_ issuer: URL) async throws -> String {
        let signer = try ClientAssertionSigner(key: SigningKey.generate(.es256))
        let jwks = try JSONDecoder().decode(JWKSDocument.self, from: signer.publicJWKSet)
        let admin = AdminAPIClient(issuer: issuer, token: ServeProcess.adminToken, transport: HTTP1Transport())
        let registered = try await admin.call(AdminAPI.createClient, body: AdminAPI.Client(id: "web-1", jwks: jwks, grantTypes: ["client_credentials"], scopes: ["host"]))
        guard registered.status == 201 else { throw BenchmarkError("register the host: HTTP \(registered.status)") }
        guard try await admin.call(AdminAPI.setHostLabels, "web-1", body: .init(labels: ["web"])).status == 200 else { throw BenchmarkError("set-host-labels") }
        guard let redirect = URL(string: "http://127.0.0.1/callback") else { throw BenchmarkError("redirect URI") }
        let client = try OAuthClient(configuration: .init(issuer: issuer, clientID: "web-1", redirectURI: redirect, authentication: .privateKeyJWT(signer, audience: .issuer)))
        return try await client.clientCredentials(scopes: ["host"]).accessToken
    }

    private func get(_ url: URL, token: String?, ifNoneMatch: String? = nil, transport: HTTP1Transport) async throws -> TransportResponse {
        var headers: [String: String] = [:]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        if let ifNoneMatch { headers["If-None-Match"] = ifNoneMatch }
        return try await transport.send(TransportRequest(method: HTTPMethod.get, url: url, headers: headers))
    }

    /// One whole walk; the accounts it read and the first page's tag.
    private func walk(_ issuer: URL, token: String, transport: HTTP1Transport) async throws -> (Int, String) {
        var cursor: String?
        var (read, tag) = (0, "")
        repeat {
            var components = URLComponents(url: issuer.appendingPathComponent(ProtocolPath.hostDirectory), resolvingAgainstBaseURL: false)
            if let cursor { components?.queryItems = [URLQueryItem(name: HostDirectoryPage.Query.cursor, value: cursor)] }
            guard let url = components?.url else { throw BenchmarkError("directory URL") }
            let response = try await get(url, token: token, transport: transport)
            guard response.status == 200 else { throw BenchmarkError("directory: HTTP \(response.status)") }
            let page = try JSONDecoder().decode(HostDirectoryPage.self, from: response.body)
            if cursor == nil { tag = response.headers["etag"] ?? "" }
            read += page.accounts.count
            cursor = page.next
        } while cursor != nil
        return (read, tag)
    }

    private func directoryCPU(server: ServeProcess, scratch: URL, token: String, transport: HTTP1Transport, into report: inout Report) async throws {
        let client = try await ProviderBenchmark.Client.bound(
            issuer: server.issuer, directory: scratch.appendingPathComponent("client"), transport: transport, name: "fleet-bench"
        )
        guard let redirect = URL(string: "http://127.0.0.1/callback") else { throw BenchmarkError("redirect URI") }
        var tokens = try await client.embedded.authenticate(issuer: server.issuer, clientID: "latchkey-cli", redirectURI: redirect, scopes: ["openid", "offline_access"])
        let (first, _) = try await walk(server.issuer, token: token, transport: transport)
        guard first == accounts else { throw BenchmarkError("the host read \(first) accounts, not \(accounts)") }
        let rounds = 4
        let refreshes = max(100, Int(seconds * 100))
        let walks = max(2, Int(seconds))
        var (refreshCPU, walkCPU) = (0.0, 0.0)
        for _ in 0..<rounds {
            var before = server.cpuSeconds
            for _ in 0..<refreshes { tokens = try await client.embedded.refresh(tokens) }
            refreshCPU += server.cpuSeconds - before
            before = server.cpuSeconds
            for _ in 0..<walks { _ = try await walk(server.issuer, token: token, transport: transport) }
            walkCPU += server.cpuSeconds - before
        }
        let perRefresh = refreshCPU * 1000 / Double(rounds * refreshes)
        let perHundred = walkCPU * 1000 / Double(rounds * walks) / (Double(accounts) / 100)
        report.lines.append(ReportLine(
            name: "directory read: server CPU ms per 100 accounts", latchkey: perHundred, reference: perRefresh,
            referenceName: "token refresh: server CPU ms", target: .ratioAtMost(2)
        ))
    }

    private func notModified(server: ServeProcess, token: String, transport: HTTP1Transport, into report: inout Report) async throws {
        let directory = server.issuer.appendingPathComponent(ProtocolPath.hostDirectory)
        let health = server.issuer.appendingPathComponent("healthz")
        let (_, tag) = try await walk(server.issuer, token: token, transport: transport)
        let checked = try await get(directory, token: token, ifNoneMatch: tag, transport: transport)
        guard checked.status == 304 else { throw BenchmarkError("If-None-Match \(tag): HTTP \(checked.status), not 304") }
        let perRound = max(200, Int(seconds * 200))
        var (bareTimes, checkTimes) = ([Double](), [Double]())
        var (bareCPU, checkCPU) = (0.0, 0.0)
        for _ in 0..<8 {
            var before = server.cpuSeconds
            var start = DispatchTime.now().uptimeNanoseconds
            for _ in 0..<perRound { _ = try await get(health, token: nil, transport: transport) }
            bareTimes.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 / Double(perRound))
            bareCPU += server.cpuSeconds - before
            before = server.cpuSeconds
            start = DispatchTime.now().uptimeNanoseconds
            for _ in 0..<perRound { _ = try await get(directory, token: token, ifNoneMatch: tag, transport: transport) }
            checkTimes.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 / Double(perRound))
            checkCPU += server.cpuSeconds - before
        }
        report.lines.append(ReportLine(
            name: "directory unchanged (304): ms per request", latchkey: AgentBenchmark.median(checkTimes), reference: AgentBenchmark.median(bareTimes),
            referenceName: "GET /healthz: ms per request", target: .ratioAtMost(1.2)
        ))
        let count = Double(8 * perRound)
        report.lines.append(ReportLine(
            name: "directory unchanged (304): server CPU µs", latchkey: checkCPU * 1e6 / count, reference: bareCPU * 1e6 / count,
            referenceName: "GET /healthz: server CPU µs"
        ))
    }
}
