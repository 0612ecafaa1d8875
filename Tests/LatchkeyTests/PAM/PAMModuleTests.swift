import Foundation
import Glibc
import Latchkey
import LatchkeyIdP
import LatchkeyProtocol
import LatchkeyTestSupport
import Synchronization
import Testing

/// `pam_latchkey.so` on the real PAM stack (docs/guides/pam.md; docs/PROTOCOL.md section 13): Debian's `pamtester` under `pam_wrapper`
/// loads the module SwiftPM built, which runs `latchkey pam helper`; the host is enrolled
/// at a running provider and a person approves or denies with a passkey from a vault of
/// their own, as `latchkey approve` does.
@Suite("PAM: pam_latchkey under pamtester and pam_wrapper", .serialized)
struct PAMModuleTests {
    /// A person with a passkey: the identity `username`, bound in a vault of its own.
    static func approver(_ provider: ProviderHarness, _ username: String) async throws -> (Embedded, TemporaryVault) {
        let vault = try TemporaryVault()
        let embedded = try vault.embedded(allowing: [provider.host])
        let (_, bindURL) = try await provider.createIdentity(username)
        _ = try await embedded.registerCredential(from: bindURL)
        return (embedded, vault)
    }

    /// A host enrolled at `provider`, `approver` with a passkey (its vault kept alive with
    /// it), and pamtester waiting for `user`'s approval: the code it shows.
    struct WaitingLogin {
        let host: PAMHost
        let approver: Embedded
        let vault: TemporaryVault
        let run: PAMRun
        let code: String
    }

    static func waitingLogin(_ provider: ProviderHarness, user: String = "alice", approver name: String = "alice") async throws -> WaitingLogin {
        let host = try await PAMHost.enroll(provider)
        let (approver, vault) = try await approver(provider, name)
        let run = try host.start(service: try host.service(), user: user)
        return WaitingLogin(host: host, approver: approver, vault: vault, run: run, code: try await run.userCode())
    }

    @Test("approved with a passkey on another device: PAM_SUCCESS; the approver was shown host, service, account and address; the module's process maps nothing of Swift; one pam.approved event")
    func approve() async throws {
        try await ProviderHarness.run { provider in
            let login = try await Self.waitingLogin(provider)
            let (host, alice, run, code) = (login.host, login.approver, login.run, login.code)

            // The module is loaded, waiting: nothing of Swift is mapped in its process.
            // Read to its end (a /proc file reports no size, and Foundation stops at a page).
            let maps = try await ChildProcess.run(URL(fileURLWithPath: "/bin/cat"), ["/proc/\(run.process.processIdentifier)/maps"]).stdout
            let mapped = Set(maps.split(separator: "\n").compactMap { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst(5).first.map(String.init) })
            #expect(mapped.contains { $0.hasSuffix("/pam_latchkey.so") }, "the module is loaded: \(mapped.sorted())")
            let swift = mapped.filter { $0.contains("libswift") || $0.contains("Foundation") || $0.contains("/swift/") }
            #expect(swift.isEmpty, "nothing of Swift in the PAM process: \(swift.sorted())")

            let shown = Mutex<DeviceApprovalRequest?>(nil)
            let decided = try await alice.approveDevice(issuer: provider.issuer, userCode: code) { request in
                shown.withLock { $0 = request }
                return true
            }
            #expect(decided)
            let (status, output) = try await run.finish()
            #expect(status == 0 && output.contains("successfully authenticated"), "\(output)")
            let request = try #require(shown.withLock { $0 })
            #expect(request.clientID == host.clientID && request.clientName == "web-1.example.com")
            #expect(request.hostLogin?.user == "alice" && request.hostLogin?.service == "latchkey-test" && request.hostLogin?.remoteHost == nil)

            let events = try await provider.auditEvents().filter { $0.type == .pamApproved }
            #expect(events.count == 1 && events.first?.client == host.clientID && events.first?.details?.username == "alice")
            #expect(events.first?.details?.service == "latchkey-test")
        }
    }

    @Test("latchkey pam test USER runs one approval from the terminal: the code on stderr, exit 0 once approved")
    func commandLineTest() async throws {
        try await ProviderHarness.run { provider in
            let host = try await PAMHost.enroll(provider)
            let (alice, vault) = try await Self.approver(provider, "alice")
            _ = vault
            let output = Pipe()
            let process = try SpawnedProcess(
                LatchkeyCommand.binary, ["pam", "test", "alice", "--config", host.config.path], environment: ["PATH": "/usr/bin:/bin"],
                stdout: .pipe(output), stderr: .pipe(output)
            )
            let run = PAMRun(process: process, output: output)
            _ = try await alice.approveDevice(issuer: provider.issuer, userCode: try await run.userCode()) { _ in true }
            let (status, text) = try await run.finish()
            #expect(status == 0 && text.contains("approved by alice"), "\(text)")
        }
    }

    @Test(
        "the host's client key in a TPM (swtpm): pam enroll --key-protection tpm names the TPM in pam.conf, and the helper, started with no TPM2OPENSSL_TCTI of its own, signs with it",
        .requires(if: SoftwareTPM.available, "skipped: swtpm or tpm2-openssl is not installed (.ci/run installs them)")
    )
    func clientKeyInTPM() async throws {
        let tpm = try await SoftwareTPM()
        try await ProviderHarness.run { provider in
            let host = try await PAMHost.enroll(provider, enrollArguments: ["--key-protection", "tpm"], environment: tpm.environment)
            let configuration = try String(contentsOf: host.config, encoding: .utf8)
            #expect(configuration.contains("\ntpm = \(tpm.tcti)\n"), "\(configuration)")
            let (alice, vault) = try await Self.approver(provider, "alice")
            defer { vault.cleanUp() }
            // pamtester's own environment names no TPM; the module passes none to the helper.
            let run = try host.start(service: try host.service(), user: "alice")
            let code = try await run.userCode()
            _ = try await alice.approveDevice(issuer: provider.issuer, userCode: code) { _ in true }
            let (status, output) = try await run.finish()
            #expect(status == 0 && output.contains("successfully authenticated"), "\(output)")
            let approved = try await provider.auditEvents().filter { $0.type == .pamApproved }
            #expect(approved.count == 1 && approved.first?.client == host.clientID)

            // The same file naming a TPM nothing answers at: no approval is asked for.
            try Data(configuration.replacingOccurrences(of: tpm.tcti, with: "swtpm:host=127.0.0.1,port=1").utf8).write(to: host.config)
            let (refused, refusedOutput) = try await host.start(service: try host.service(), user: "alice").finish()
            #expect(refused != 0 && !refusedOutput.contains("latchkey approve"), "\(refusedOutput)")
        }
    }

    @Test("denied on the approving device: PAM_AUTH_ERR with the reason in the module's log, and one pam.denied event")
    func deny() async throws {
        try await ProviderHarness.run { provider in
            let login = try await Self.waitingLogin(provider)
            _ = try await login.approver.approveDevice(issuer: provider.issuer, userCode: login.code, decision: .deny) { _ in true }
            let (status, output) = try await login.run.finish()
            #expect(status != 0 && output.contains("Authentication failure"), "\(output)")
            #expect(output.contains("The sign-in was denied."), "a line for the person: \(output)")
            #expect(output.contains("denied on the approving device"), "the reason, in the log pam_wrapper prints: \(output)")
            #expect(try await provider.auditEvents().filter { $0.type == .pamDenied }.count == 1)
        }
    }

    @Test("another identity approving: PAM_AUTH_ERR, naming who approved")
    func anotherIdentity() async throws {
        try await ProviderHarness.run { provider in
            _ = try await provider.createIdentity("alice")
            let login = try await Self.waitingLogin(provider, approver: "bob")
            _ = try await login.approver.approveDevice(issuer: provider.issuer, userCode: login.code) { _ in true }
            let (status, output) = try await login.run.finish()
            #expect(status != 0 && output.contains("Authentication failure") && output.contains("approved by bob"), "\(output)")
            #expect(output.contains("not made by someone allowed to use this account"), "\(output)")
        }
    }

    @Test("root is approved by no one unless mapped; mapped, by that identity")
    func rootMapping() async throws {
        try await ProviderHarness.run { provider in
            let unmapped = try await PAMHost.enroll(provider)
            let refused = try unmapped.start(service: try unmapped.service(), user: "root")
            let (status, output) = try await refused.finish()
            #expect(status != 0 && output.contains("User not known"), "\(output)")

            let mapped = try await PAMHost.enroll(provider, clientID: "web-2", extra: ["map root = alice"])
            let (alice, vault) = try await Self.approver(provider, "alice")
            _ = vault
            let run = try mapped.start(service: try mapped.service(), user: "root")
            _ = try await alice.approveDevice(issuer: provider.issuer, userCode: try await run.userCode()) { _ in true }
            let (approved, approvedOutput) = try await run.finish()
            #expect(approved == 0, "\(approvedOutput)")
        }
    }

    @Test("no approval within the configured time: PAM_AUTH_ERR after the timeout, not later")
    func timeout() async throws {
        try await ProviderHarness.run { provider in
            let host = try await PAMHost.enroll(provider)
            try host.setTimeout(10)
            let started = Date()
            let run = try host.start(service: try host.service(), user: "alice")
            let (status, output) = try await run.finish(seconds: 40)
            let took = Date().timeIntervalSince(started)
            #expect(status != 0 && output.contains("Authentication failure") && output.contains("no approval within 10 s"), "\(output)")
            #expect(took >= 10 && took < 25, "took \(took) s")
        }
    }

    @Test("guessing user codes while a login waits: wrong codes are refused, then every lookup from that address (the right code too), and the login is not approved")
    func guessingWhileWaiting() async throws {
        try await ProviderHarness.run(nil, { $0.maximumUserCodeFailuresPerAddress = 5 }) { provider in
            let host = try await PAMHost.enroll(provider)
            try host.setTimeout(10)
            let run = try host.start(service: try host.service(), user: "alice")
            let code = try await run.userCode()
            var statuses: [Int] = []
            for guess in ["BCDF-GHJK", "CDFG-HJKL", "DFGH-JKLM", "FGHJ-KLMN", "GHJK-LMNP", "HJKL-MNPQ"] where guess != code {
                statuses.append(try await DeviceGrantTests.lookup(provider, guess))
            }
            #expect(statuses.prefix(5).allSatisfy { $0 == 400 } && statuses.dropFirst(5).allSatisfy { $0 == 429 }, "\(statuses)")
            #expect(try await DeviceGrantTests.lookup(provider, code) == 429, "past the limit, the right code is refused too")
            let (status, output) = try await run.finish(seconds: 40)
            #expect(status != 0 && output.contains("No approval came in time."), "\(output)")
        }
    }

    @Test("a host the provider does not know, and a provider that is down: PAM_AUTHINFO_UNAVAIL, so PAM may fall back")
    func unavailable() async throws {
        try await ProviderHarness.run { provider in
            let unknown = try await PAMHost.enroll(provider, clientID: "not-registered", register: false)
            let (status, output) = try await unknown.start(service: try unknown.service(), user: "alice").finish()
            #expect(status != 0 && output.contains("cannot retrieve authentication info"), "\(output)")
            #expect(output.contains("refused this host"), "\(output)")

            // Nothing listens on this port.
            let port = try LoopbackPort.free()
            let down = try await PAMHost.enroll(provider, clientID: "down", register: false, issuer: URL(string: "http://127.0.0.1:\(port)")!)
            let (downStatus, downOutput) = try await down.start(service: try down.service(), user: "alice").finish()
            #expect(downStatus != 0 && downOutput.contains("cannot retrieve authentication info") && downOutput.contains("cannot be reached"), "\(downOutput)")
        }
    }
}

/// The module against a helper that misbehaves, and the inputs a stranger controls
/// (docs/SECURITY.md, "PAM"): every failure is a failure, within the module's timeout.
@Suite("PAM: pam_latchkey against hostile helpers and items", .serialized)
struct PAMModuleHostileTests {
    /// A stand-in helper: a shell script that plays a broken helper.
    static func script(_ host: PAMHost, _ name: String, _ body: String) throws -> URL {
        let url = host.directory.url.appendingPathComponent(name)
        try Data(("#!/bin/sh\n" + body + "\n").utf8).write(to: url)
        chmod(url.path, 0o755)
        return url
    }

    @Test("a helper that hangs is killed at the module's timeout; one that dies, answers another protocol, writes an oversized or unknown line: each a failure, never success")
    func brokenHelpers() async throws {
        try await ProviderHarness.run { provider in
            let host = try await PAMHost.enroll(provider)
            let pidFile = host.directory.url.appendingPathComponent("helper.pid")
            let cases: [(String, String, String)] = [
                ("hangs", "echo $$ > \(pidFile.path); read -r v; echo LATCHKEY-PAM/1; sleep 600", "did not answer in time"),
                ("dies", "exit 3", "the helper"),
                ("speaks-another", "read -r v; echo HELLO/9", "does not speak LATCHKEY-PAM/1"),
                ("oversized", "read -r v; echo LATCHKEY-PAM/1; head -c 9000 /dev/zero | tr '\\\\000' a; echo", "malformed line"),
                ("unknown-line", "read -r v; echo LATCHKEY-PAM/1; echo 'GRANT root'", "does not know"),
                ("no-result", "read -r v; echo LATCHKEY-PAM/1; echo 'INFO hello'", "ended without a result"),
                ("bad-verdict", "read -r v; echo LATCHKEY-PAM/1; echo 'RESULT successful yes'", ""),
            ]
            // Each stand-in reads the request's first line before misbehaving, so the
            // module's write of the request never races its exit.
            for (name, body, reason) in cases {
                let helper = try Self.script(host, name, body)
                let service = try host.service(name, arguments: ["helper=\(helper.path)", "timeout=3"])
                let started = Date()
                let (status, output) = try await host.start(service: service, user: "alice").finish(seconds: 20)
                #expect(status != 0 && !output.contains("successfully authenticated"), "\(name): \(output)")
                #expect(reason.isEmpty || output.contains(reason), "\(name): \(output)")
                #expect(Date().timeIntervalSince(started) < 10, "\(name) took too long")
            }
            // The hung helper was killed, not left behind.
            let pid = try #require(Int32(try String(contentsOf: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(kill(pid, 0) != 0, "the hung helper is gone")
        }
    }

    @Test("the helper gets none of the caller's environment (LD_PRELOAD, PATH, LATCHKEY_*), and bad module arguments fail closed")
    func cleanEnvironment() async throws {
        try await ProviderHarness.run { provider in
            let host = try await PAMHost.enroll(provider)
            let dump = host.directory.url.appendingPathComponent("environment")
            let helper = try Self.script(host, "dump", "env > \(dump.path); read -r v; echo LATCHKEY-PAM/1; echo 'RESULT auth_err dumped'")
            let service = try host.service("dump", arguments: ["helper=\(helper.path)"])
            _ = try await host.start(service: service, user: "alice", environment: [
                "LATCHKEY_PASSPHRASE": "stolen", "LATCHKEY_VAULT": "/tmp/evil", "PATH": "/tmp/evil:/usr/bin:/bin",
            ]).finish()
            let names = Set(try String(contentsOf: dump, encoding: .utf8).split(separator: "\n").compactMap { $0.split(separator: "=").first.map(String.init) })
            #expect(names.isSubset(of: ["PATH", "LANG", "PWD", "SHLVL", "_"]), "\(names.sorted())")
            let environment = try String(contentsOf: dump, encoding: .utf8)
            #expect(!environment.contains("/tmp/evil") && !environment.contains("stolen") && !environment.contains("LD_PRELOAD"))

            for arguments in [["helper=relative/latchkey"], ["timeout=0"], ["timeout=9999"], ["frobnicate"]] {
                let bad = try host.service("bad", arguments: arguments)
                let (status, output) = try await host.start(service: bad, user: "alice").finish()
                #expect(status != 0 && !output.contains("successfully authenticated"), "\(arguments): \(output)")
            }
        }
    }

    @Test("a configuration the helper must not believe: owned by another user, writable by others, a symlink, an unknown key; a vault key file others can read: each PAM_AUTHINFO_UNAVAIL, nothing asked of the provider")
    func untrustedConfiguration() async throws {
        try await ProviderHarness.run { provider in
            let host = try await PAMHost.enroll(provider)
            let original = try Data(contentsOf: host.config)
            let keyFile = host.directory.url.appendingPathComponent("vault.key")
            let link = host.directory.url.appendingPathComponent("linked.conf")
            let cases: [(String, () throws -> Void, () throws -> Void)] = [
                ("owned by nobody", { chown(host.config.path, 65534, 65534) }, { chown(host.config.path, 0, 0) }),
                ("writable by others", { chmod(host.config.path, 0o666) }, { chmod(host.config.path, 0o644) }),
                ("an unknown key", { try (original + Data("frobnicate = yes\n".utf8)).write(to: host.config) }, { try original.write(to: host.config) }),
                ("a key file others can read", { chmod(keyFile.path, 0o644) }, { chmod(keyFile.path, 0o600) }),
            ]
            for (name, spoil, mend) in cases {
                try spoil()
                let (status, output) = try await host.start(service: try host.service(), user: "alice").finish()
                #expect(status != 0 && output.contains("cannot retrieve authentication info") && !output.contains("latchkey approve"), "\(name): \(output)")
                try mend()
            }
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: host.config)
            let service = try host.service("linked", arguments: ["helper=\(LatchkeyCommand.binary.path)", "config=\(link.path)"])
            let (status, output) = try await host.start(service: service, user: "alice").finish()
            #expect(status != 0 && output.contains("cannot retrieve authentication info") && !output.contains("latchkey approve"), "symlink: \(output)")
            #expect(try await provider.auditEvents().filter { $0.type == .pamApproved || $0.type == .pamDenied }.isEmpty)
        }
    }

    @Test("a user name with a control character or 64 KiB long is refused before any helper runs; PAM_RHOST with terminal escapes reaches the approver escaped")
    func hostileItems() async throws {
        try await ProviderHarness.run { provider in
            let host = try await PAMHost.enroll(provider)
            let marker = host.directory.url.appendingPathComponent("ran")
            let helper = try Self.script(host, "marker", "touch \(marker.path); exit 1")
            let service = try host.service("marker", arguments: ["helper=\(helper.path)"])
            for user in ["alice\u{1B}[2J", String(repeating: "a", count: 64 * 1024)] {
                let (status, output) = try await host.start(service: service, user: user).finish()
                #expect(status != 0 && output.contains("User not known"), "\(output.prefix(300))")
            }
            #expect(!FileManager.default.fileExists(atPath: marker.path), "no helper ran")

            // pamtester sets PAM_RHOST with -I; the real helper shows it escaped.
            let vault = try TemporaryVault()
            let alice = try vault.embedded(allowing: [provider.host])
            let (_, bindURL) = try await provider.createIdentity("alice")
            _ = try await alice.registerCredential(from: bindURL)
            let run = try host.start(service: try host.service(), user: "alice", items: ["rhost=evil\u{1B}[2J\u{202E}.example"])
            let shown = Mutex<DeviceApprovalRequest?>(nil)
            _ = try await alice.approveDevice(issuer: provider.issuer, userCode: try await run.userCode(), decision: .deny) { request in
                shown.withLock { $0 = request }
                return true
            }
            _ = try await run.finish()
            let remote = try #require(shown.withLock { $0 }?.hostLogin?.remoteHost)
            #expect(remote == "evil\\u{1B}[2J\\u{202E}.example", "\(remote)")
        }
    }
}

/// The module as built: what it needs to load, and what it exports.
@Suite("PAM: pam_latchkey.so as SwiftPM builds it")
struct PAMModuleBuildTests {
    @Test("the module needs libpam and libc alone (no Swift, no libstdc++ or libm), and exports only the PAM entry points: authenticate and setcred, acct_mgmt, open and close session")
    func linkage() async throws {
        try PAMHost.requireTools()
        let ldd = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/ldd"), [PAMHost.module.path])
        #expect(ldd.status == 0 && ldd.stdout.contains("libpam.so") && !ldd.stdout.contains("swift") && !ldd.stdout.contains("Foundation"), "\(ldd.stdout)")
        let dynamic = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/readelf"), ["-d", PAMHost.module.path])
        let needed = dynamic.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }.compactMap { line in
            line.split(separator: "[").last?.split(separator: "]").first.map(String.init)
        }
        #expect(needed == ["libpam.so.0", "libc.so.6"], "\(needed)")
        let symbols = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/nm"), ["-D", "--defined-only", PAMHost.module.path])
        let exported = Set(symbols.stdout.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(separator: " ")
            return fields.count == 3 && fields[1] == "T" ? String(fields[2]) : nil
        })
        #expect(exported == ["pam_sm_authenticate", "pam_sm_setcred", "pam_sm_acct_mgmt", "pam_sm_open_session", "pam_sm_close_session"], "\(exported.sorted())")
    }
}
