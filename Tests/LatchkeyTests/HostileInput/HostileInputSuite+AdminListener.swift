import Foundation
import LatchkeyOAuth
import LatchkeyTestSupport
import Testing

/// The admin API kept off the public port (docs/SECURITY.md, "The reference provider"):
/// with `serve --admin-listen` the public listener has no admin API, metrics or probes;
/// without it, `serve` warns when the shared listener faces the network.
extension HostileInputSuite {
    @Test("serve --admin-listen: admin API, /metrics and probes move there; the public listener answers 404 for them")
    func adminListener() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: LatchkeyServe.binary.path), "latchkey is built with the tests")
        let (server, ready, _) = try await OperationsTests.serve(["--port", "0", "--admin-listen", "127.0.0.1:0"])
        defer { ChildProcess.stop(server) }
        let issuer = try #require(ready["issuer"]?.stringValue.flatMap(URL.init(string:)))
        let admin = try #require(ready["admin"]?.stringValue.flatMap(URL.init(string:)))
        #expect(admin.port != issuer.port)
        for path in ["admin/outbox", "metrics", "healthz", "readyz", "health"] {
            #expect(try await OperationsTests.get(issuer.appendingPathComponent(path), token: CommandLineTests.adminToken).0 == 404, "public /\(path)")
        }
        #expect(try await OperationsTests.get(issuer.appendingPathComponent(".well-known/openid-configuration")).0 == 200)
        #expect(try await OperationsTests.get(admin.appendingPathComponent("healthz")).0 == 200)
        #expect(try await OperationsTests.get(admin.appendingPathComponent("readyz")).0 == 200)
        let (metricsStatus, metrics, _) = try await OperationsTests.get(admin.appendingPathComponent("metrics"))
        let samples = try OperationsTests.parsePrometheus(metrics)
        #expect(metricsStatus == 200 && samples["latchkey_sign_ins_total"] == 0, "open on the admin listener")
        #expect(try await OperationsTests.get(admin.appendingPathComponent("admin/outbox")).0 == 401, "the admin API still takes its token")
        #expect(try await OperationsTests.get(admin.appendingPathComponent("admin/outbox"), token: CommandLineTests.adminToken).0 == 200)
        #expect(try await OperationsTests.get(admin.appendingPathComponent("authorize")).0 == 404, "the admin listener serves no sign-ins")
    }

    @Test("serve warns when the admin API shares a listener that is not on loopback")
    func sharedListenerWarning() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: LatchkeyServe.binary.path), "latchkey is built with the tests")
        let (server, _, transcript) = try await OperationsTests.serve(["--host", "0.0.0.0", "--port", "0", "--issuer", "https://id.example.com"])
        ChildProcess.stop(server)
        #expect(transcript.contains("--admin-listen"), "\(transcript)")
        let (quiet, _, loopback) = try await OperationsTests.serve(["--port", "0"])
        ChildProcess.stop(quiet)
        #expect(!loopback.contains("--admin-listen"), "no warning on loopback: \(loopback)")
    }
}
