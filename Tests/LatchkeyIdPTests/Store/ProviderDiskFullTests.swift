import Foundation
import LatchkeyOAuth
import LatchkeyCrypto
@testable import LatchkeyIdP
import LatchkeyTestSupport
import Testing

/// `latchkey serve` with its SQLite store on a full disk: a 2 MiB tmpfs mounted in a
/// private mount namespace (`unshare -rm`, no privileges needed; where user namespaces
/// are off the test says it was skipped). Writes must fail with 503 and the store's own
/// error, reads must go on, and every write acknowledged before must still be there.
@Suite("Provider store on a full disk", .timeLimit(.minutes(5)))
struct ProviderDiskFullTests {
    @Test("identities created until the disk is full: 503 temporarily_unavailable, reads still served, every acknowledged identity kept")
    func diskFull() async throws {
        let binary = LatchkeyServe.binary
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "latchkey is built with the tests")
        guard let unshare = ["/usr/bin/unshare", "/bin/unshare"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            try TestEnvironment.unavailable("unshare (util-linux) not found, so no private tmpfs to fill")
        }
        let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("latchkey-full-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: scratch) }
        let file = { (name: String) in scratch.appendingPathComponent(name).path }
        try FileManager.default.createDirectory(atPath: file("disk"), withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let port = try MultiInstanceTests.freePort()
        let script = """
            mount -t tmpfs -o size=2m,mode=0700 tmpfs "$1" || exit 77
            LATCHKEY_ADMIN_TOKEN="$4" "$2" serve --port "$3" --data-dir "$1/data" --json > "$5" 2> "$6" &
            echo $! > "$7"
            wait $!
            cp -a "$1/data" "$8"
            """
        let process = try SpawnedProcess(
            URL(fileURLWithPath: unshare),
            ["-rm", "/bin/sh", "-c", script, "sh", file("disk"), binary.path, "\(port)", ProviderTests.adminToken,
             file("stdout"), file("stderr"), file("pid"), file("copy")],
            stdout: .inherit, stderr: .inherit
        )
        let exited = { () async -> Int32 in await ChildProcess.waitForExit(process) }

        // Wait for the issuer line (or for the namespace to be refused).
        var listening = false
        for _ in 0..<200 where !listening {
            if !process.isRunning { break }
            listening = ((try? String(contentsOfFile: file("stdout"), encoding: .utf8)) ?? "").contains("issuer")
            if !listening { try await Task.sleep(for: .milliseconds(50)) }
        }
        guard listening else {
            let status = await exited()
            try #require(status == 77, "latchkey serve did not start: \((try? String(contentsOfFile: file("stderr"), encoding: .utf8)) ?? "")")
            try TestEnvironment.unavailable("no private tmpfs to fill (unshare -rm exited \(status): user namespaces are off)")
        }
        let issuer = try #require(URL(string: "http://127.0.0.1:\(port)"))
        var acknowledged: [String] = []
        var refusals: [String] = []
        for index in 0..<3000 where refusals.count < 5 {
            let (status, answer) = try await ProviderTests.request(
                "POST", issuer.appendingPathComponent("admin/identities"),
                json: try JSONSerialization.data(withJSONObject: ["username": "user\(index)", "email": "user\(index)@example.com", "displayName": String(repeating: "x", count: 200)]),
                headers: ["Authorization": "Bearer \(ProviderTests.adminToken)"]
            )
            if status == 201 { acknowledged.append("user\(index)") } else { refusals.append("\(status) \(answer["error"]?.stringValue ?? "-")") }
        }
        print("Provider disk-full test: \(acknowledged.count) identities acknowledged before the 2 MiB disk filled; then \(refusals)")
        // Reads go on while writes cannot.
        let (jwks, _) = try await ProviderTests.request("GET", issuer.appendingPathComponent("jwks"))
        let pid = try #require(Int32(try String(contentsOfFile: file("pid"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        kill(pid, SIGTERM)
        _ = await exited()

        #expect(acknowledged.count > 10, "the disk filled too early to show anything")
        #expect(!refusals.isEmpty && refusals.allSatisfy { $0 == "503 temporarily_unavailable" }, "\(refusals)")
        #expect(jwks == 200)
        let log = (try? String(contentsOfFile: file("stderr"), encoding: .utf8)) ?? ""
        #expect(log.contains("diskFull"), "the log names the store's error")

        // Every acknowledged identity is in the copy of the store.
        var configuration = ProviderConfiguration(adminToken: "t")
        configuration.dataDirectory = URL(fileURLWithPath: file("copy"))
        let provider = try await Provider.open(configuration)
        let stored = Set(try await provider.context.database.transaction { transaction in
            try await provider.identities.list(after: nil, limit: 500, in: transaction).map(\.username)
        })
        await provider.context.database.close()
        let missing = acknowledged.filter { !stored.contains($0) }
        #expect(missing.isEmpty, "acknowledged but lost: \(missing)")
    }
}
