import Foundation
import Latchkey
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Logging

/// The provider under the floods of docs/SECURITY.md, "Limits", with a real user beside
/// them: 10,000 `GET /authorize` from one address, then 1,000 transfer starts (with the
/// user's credential ID, as `login_hint` hands it out) and 1,000 recovery starts for
/// made-up names spread over 200 addresses. The user, at another address, must still
/// sign in, export and recover, and the provider's resident memory must stay bounded.
/// Sign-in latency after the floods is compared with the same user's before them, in the
/// same run; the store is a durable SQLite file, as `serve --data-dir` keeps it.
struct AttackBenchmark {
    /// Sign-ins timed before and after, for the p50.
    var samples = 20

    func run() async throws -> Report {
        let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("latchkey-bench-attack-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: scratch) }
        var configuration = ProviderConfiguration(adminToken: ServeProcess.adminToken)
        configuration.logLevel = .critical
        configuration.storage = .sqlite(directory: scratch.appendingPathComponent("store"))
        return try await withReferenceProvider(configuration: configuration) { issuer in
            try await attack(issuer, scratch: scratch)
        }
    }

    private func attack(_ issuer: URL, scratch: URL) async throws -> Report {
        var report = Report(title: "Reference provider under attack: floods that prove nothing, and a real user at another address")
        let port = issuer.port ?? 80
        let transport = HTTP1Transport()
        let user = try await ProviderBenchmark.Client.bound(
            issuer: issuer, directory: scratch.appendingPathComponent("user"), transport: transport, name: "ada", email: "ada@example.com",
            stepHandler: { step in
                // The exporting device approves its own export (the user compared the fingerprints).
                guard step.name == .confirmImport else { throw BenchmarkError("unexpected step \(step.name)") }
                return .approve
            }
        )
        let before = try await signInP50(user)
        let residentBefore = PeakMemory.resident()

        // 10,000 /authorize from one address, 8 at a time.
        let hint = "/authorize?client_id=latchkey-cli&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcallback&response_type=code"
            + "&code_challenge_method=S256&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&state=s&login_hint=ada"
        let authorize = await Self.flood(port: port, count: 10_000, source: { _ in "127.0.0.2" }) { _ in ("GET", hint, nil) }
        let residentAfterAuthorize = PeakMemory.resident()
        let after = try await signInP50(user)
        report.lines.append(ReportLine(name: "10,000 /authorize from one address: per s", latchkey: authorize.rate, reference: nil, referenceName: "answered 200: \(authorize.ok)"))
        report.lines.append(ReportLine(name: "  refused for want of room (503)", latchkey: Double(authorize.statuses[503, default: 0]), reference: nil, referenceName: "-", target: .atMost(0)))
        report.lines.append(ReportLine(name: "  user's sign-in p50 ms, after vs before", latchkey: after, reference: before, referenceName: "before", target: .ratioAtMost(1.5)))

        // 1,000 transfer starts and 1,000 recovery starts over 200 addresses.
        let credential = try await user.embedded.credentials().first?.id ?? ""
        let transfers = await Self.flood(port: port, count: 1000, source: { RawConnection.standIn($0 % 200) }) { _ in
            ("POST", "/v1/transfers", ["credential": .string(credential)])
        }
        let recoveries = await Self.flood(port: port, count: 1000, source: { RawConnection.standIn($0 % 200) }) { index in
            ("POST", "/v1/recovery", ["username": "ghost\(index)"])
        }
        let residentAfter = PeakMemory.resident()
        report.lines.append(ReportLine(name: "1,000 transfer starts, 200 addresses: per s", latchkey: transfers.rate, reference: nil, referenceName: "answered 201: \(transfers.statuses[201, default: 0])"))
        report.lines.append(ReportLine(name: "1,000 recovery starts, 200 addresses: per s", latchkey: recoveries.rate, reference: nil, referenceName: "answered 200: \(recoveries.statuses[200, default: 0])"))

        // The user, from 127.0.0.1: export to a second device, then recover on a third.
        let exportStart = ContinuousClock.now
        let exported = try await exportAndImport(user, issuer: issuer, scratch: scratch, transport: transport)
        let exportMs = (ContinuousClock.now - exportStart).milliseconds
        let recoveryStart = ContinuousClock.now
        let recovered = try await recover(issuer: issuer, scratch: scratch, transport: transport)
        let recoveryMs = (ContinuousClock.now - recoveryStart).milliseconds
        report.lines.append(ReportLine(name: "  user's export and import after the floods, ms", latchkey: exportMs, reference: nil, referenceName: exported ? "succeeded" : "FAILED", target: exported ? nil : .atMost(-1)))
        report.lines.append(ReportLine(name: "  user's recovery after the floods, ms", latchkey: recoveryMs, reference: nil, referenceName: recovered ? "succeeded" : "FAILED", target: recovered ? nil : .atMost(-1)))
        report.lines.append(ReportLine(
            name: "resident memory after the floods, MiB", latchkey: residentAfter.mebibytes, reference: residentBefore.mebibytes,
            referenceName: "before", target: .ratioAtMost(1.5)
        ))
        report.notes = [
            "in-process provider on a durable SQLite store; attackers over raw connections from 127.0.0.2 and 127.0.1.1-127.0.1.200, the user from 127.0.0.1",
            String(format: "resident memory: %.1f MiB before, %.1f MiB after the /authorize flood, %.1f MiB after all", residentBefore.mebibytes, residentAfterAuthorize.mebibytes, residentAfter.mebibytes),
            "statuses: /authorize \(authorize.statuses), transfers \(transfers.statuses), recoveries \(recoveries.statuses)",
        ]
        return report
    }

    struct Flood {
        var statuses: [Int: Int]
        var seconds: Double
        var ok: Int { statuses[200, default: 0] }
        var rate: Double { Double(statuses.values.reduce(0, +)) / max(seconds, 1e-9) }
    }

    /// `count` requests, 8 at a time, each over its own connection from `source(i)`, timed.
    static func flood(
        port: Int, count: Int, source: @escaping @Sendable (Int) -> String,
        _ request: @escaping @Sendable (Int) -> (method: String, target: String, json: JSONValue?)
    ) async -> Flood {
        let start = ContinuousClock.now
        let statuses = await RawConnection.flood(port: port, count: count, from: source, request)
        return Flood(statuses: statuses, seconds: (ContinuousClock.now - start).seconds)
    }

    private func signInP50(_ user: ProviderBenchmark.Client) async throws -> Double {
        var times: [Double] = []
        for _ in 0..<samples {
            let start = ContinuousClock.now
            try await user.authenticate()
            times.append((ContinuousClock.now - start).milliseconds)
        }
        return times.sorted()[times.count / 2]
    }

    /// Exports the user's credential to a new device by code; true when it was imported.
    private func exportAndImport(_ user: ProviderBenchmark.Client, issuer: URL, scratch: URL, transport: HTTP1Transport) async throws -> Bool {
        let importer = try ProviderBenchmark.Client.device(issuer: issuer, directory: scratch.appendingPathComponent("second"), transport: transport)
        guard let credential = try await user.embedded.credentials().first?.id else { return false }
        let codes = AsyncStream<String>.makeStream()
        let export = Task {
            for try await event in user.embedded.exportCredential(id: credential) {
                if case .codeIssued(let code, _) = event { codes.continuation.yield(code.displayed) }
            }
        }
        var iterator = codes.stream.makeAsyncIterator()
        guard let code = await iterator.next() else { return false }
        let imported = try await importer.importCredential(code: code, deviceName: "bench-second", issuer: issuer)
        _ = try? await export.value
        return imported.count == 1
    }

    /// Recovers ada on a third device with the code from the outbox; true when it worked.
    private func recover(issuer: URL, scratch: URL, transport: HTTP1Transport) async throws -> Bool {
        let handler: Embedded.StepHandler = { step in
            let outbox = try await AdminAPIClient(issuer: issuer, token: ServeProcess.adminToken, transport: transport).call(AdminAPI.outbox)
            guard step.name == .verifyCode, let code = outbox.answer?.messages.last(where: { $0.to == "ada@example.com" })?.code else {
                throw BenchmarkError("no recovery code in the outbox")
            }
            return .code(code)
        }
        let device = try ProviderBenchmark.Client.device(issuer: issuer, directory: scratch.appendingPathComponent("third"), transport: transport, stepHandler: handler)
        return try await device.recover(issuer: issuer, username: "ada").user.name == "ada"
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    var milliseconds: Double { seconds * 1000 }
}
