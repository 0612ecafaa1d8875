import Foundation
import Latchkey
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyTestSupport
import Testing

/// Running the provider as an operator does (docs/ARCHITECTURE.md, "Operations"):
/// `/metrics` and structured logs. The admin listener's tests are in the hostile-input
/// suite (`HostileInputSuite+AdminListener.swift`).
@Suite("Operations: metrics, logs")
struct OperationsTests {
    /// A GET with an optional bearer token: status, body text and headers.
    static func get(_ url: URL, token: String? = nil) async throws -> (Int, String, [String: String]) {
        let response = try await HTTPExchange.send("GET", url, headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:])
        return (response.status, response.text, response.headers)
    }

    /// Checks `text` against the Prometheus text exposition format (0.0.4): `# HELP` and
    /// `# TYPE` lines, and samples `name{label="value",…} number`. Returns the samples.
    static func parsePrometheus(_ text: String) throws -> [String: Double] {
        var samples: [String: Double] = [:]
        let name = "[a-zA-Z_:][a-zA-Z0-9_:]*"
        let label = "[a-zA-Z_][a-zA-Z0-9_]*=\"(?:[^\"\\\\\\n]|\\\\[\\\\\"n])*\""
        let sample = try Regex("^(\(name))(\\{\(label)(?:,\(label))*,?\\})? ([-+]?(?:[0-9.eE+-]+|Inf|NaN))(?: -?[0-9]+)?$")
        let help = try Regex("^# HELP \(name) .*$")
        let type = try Regex("^# TYPE \(name) (counter|gauge|histogram|summary|untyped)$")
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = String(line)
            if line.hasPrefix("#") {
                #expect(line.wholeMatch(of: help) != nil || line.wholeMatch(of: type) != nil, "a comment line that is neither HELP nor TYPE: \(line)")
                continue
            }
            let match = try #require(line.wholeMatch(of: sample), "not a Prometheus sample line: \(line)")
            let value = try #require(Double(String(match.output[3].substring ?? "").replacingOccurrences(of: "Inf", with: "inf")), "\(line)")
            samples[String(match.output[1].substring ?? "") + String(match.output[2].substring ?? "")] = value
        }
        return samples
    }

    @Test("/metrics parses as Prometheus text and counts a sign-in; on the shared listener it takes the admin token")
    func metricsCountSignIn() async throws {
        try await ProviderHarness.withVault { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host])
            _ = try await embedded.registerCredential(from: try await provider.createIdentity("ada").bindURL)
            let metrics = provider.issuer.appendingPathComponent("metrics")
            #expect(try await Self.get(metrics).0 == 401, "metrics on the public listener need the admin token")

            let (_, before, _) = try await Self.get(metrics, token: ProviderHarness.adminToken)
            #expect(try Self.parsePrometheus(before)["latchkey_sign_ins_total"] == 0)
            _ = try await provider.signIn(embedded)
            let (status, after, headers) = try await Self.get(metrics, token: ProviderHarness.adminToken)
            #expect(status == 200 && headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
            let samples = try Self.parsePrometheus(after)
            #expect(samples["latchkey_sign_ins_total"] == 1)
            // The facade signs in over the authorization challenge endpoint by default.
            #expect(samples.keys.contains { $0.hasPrefix("latchkey_http_request_duration_seconds_bucket{endpoint=\"/authorize-challenge\"") }, "\(samples.keys.sorted())")
            #expect(samples.keys.contains { $0.hasPrefix("latchkey_http_responses_total{endpoint=\"/token\",status=\"200\"") })
            #expect(samples["latchkey_store_transactions_in_flight"] != nil)

            // A refused assertion counts as a failure, by its error code.
            let (_, started) = try await provider.raw("GET", HostileInputSuite.authorizeTarget(hint: "ada"), from: "127.0.0.1")
            let authenticate = try #require(started["authenticateURL"]?.stringValue)
            _ = try await provider.raw("POST", authenticate, json: ["id": "x"], from: "127.0.0.1")
            let failures = try Self.parsePrometheus(try await Self.get(metrics, token: ProviderHarness.adminToken).1)
            #expect(failures["latchkey_sign_in_failures_total{error=\"invalid_request\"}"] == 1, "\(failures.keys.sorted())")
        }
    }

    /// `latchkey serve` with `arguments`, its ready line read: the process, the ready
    /// object, and everything it printed so far (stderr included).
    static func serve(_ arguments: [String]) async throws -> (SpawnedProcess, JSONValue, String) {
        let (server, output) = try ChildProcess.start(
            LatchkeyServe.binary, ["serve", "--json"] + arguments, environment: ["LATCHKEY_ADMIN_TOKEN": CommandLineTests.adminToken], mergingErrors: true
        )
        let (line, transcript) = await ChildProcess.firstLine(of: output) { $0.contains("\"issuer\"") }
        guard let line, let ready = try? JSONValue(json: Data(line.utf8)) else {
            ChildProcess.stop(server)
            throw TestSupportError("latchkey serve did not start: \(transcript)")
        }
        PipeReading.drainInBackground(output.fileHandleForReading)
        return (server, ready, transcript)
    }

    @Test("serve --log-format json: one JSON object a line, with the request id the answer carried, and no secret")
    func jsonLogs() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: LatchkeyServe.binary.path), "latchkey is built with the tests")
        let (server, output) = try ChildProcess.start(
            LatchkeyServe.binary, ["serve", "--json", "--port", "0", "--log-format", "json"],
            environment: ["LATCHKEY_ADMIN_TOKEN": CommandLineTests.adminToken], mergingErrors: true
        )
        defer { ChildProcess.stop(server) }
        let (line, transcript) = await ChildProcess.firstLine(of: output) { $0.contains("\"issuer\"") }
        let ready = try #require(line.flatMap { try? JSONValue(json: Data($0.utf8)) }, "\(transcript)")
        let issuer = try #require((ready["issuer"]?.stringValue).flatMap(URL.init(string:)))
        let (status, _, headers) = try await Self.get(issuer.appendingPathComponent("admin/outbox"), token: "a-wrong-token-for-the-log")
        #expect(status == 401)
        let requestID = try #require(headers["x-request-id"])
        let (logLine, logs) = await ChildProcess.firstLine(of: output) { $0.contains("admin authentication failed") }
        let entry = try #require(logLine.flatMap { try? JSONValue(json: Data($0.utf8)) }, "\(logs)")
        #expect(entry["request_id"]?.stringValue == requestID)
        #expect(entry["level"]?.stringValue == "warning" && entry["time"]?.stringValue != nil && entry["logger"]?.stringValue == "latchkey-idp")
        #expect(!logs.contains("a-wrong-token-for-the-log") && !logs.contains(CommandLineTests.adminToken.prefix(12)), "no token in the log")
    }
}
