import Foundation
import Glibc
import Latchkey
import LatchkeyIdP
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// `sshd` with `UsePAM yes` and keyboard-interactive, its PAM service `sshd` loading
/// `pam_latchkey.so` (under pam_wrapper, so the host's own /etc/pam.d is not touched),
/// and OpenSSH's `ssh` answering the prompt through `SSH_ASKPASS` (docs/guides/pam.md): the person sees the code in the prompt, approves with a
/// passkey elsewhere, presses Enter, and is in; after a denial, they are not.
@Suite("PAM: ssh into a host with keyboard-interactive and a passkey approval", .serialized)
struct PAMSSHTests {
    /// A running sshd whose PAM service `sshd` is pam_latchkey for `host`.
    static func startServer(_ host: PAMHost) async throws -> (SpawnedProcess, Int) {
        if getuid() != 0 { try TestEnvironment.unavailable("sshd with its own config runs as root (CI runs the tests as root)") }
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/sshd") else { try TestEnvironment.unavailable("no /usr/sbin/sshd (.ci/run installs openssh-server)") }
        let base = host.directory.url
        let hostKey = base.appendingPathComponent("host_ed25519").path
        let made = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/ssh-keygen"), ["-q", "-t", "ed25519", "-N", "", "-f", hostKey])
        try #require(made.status == 0, "\(made.stderr)")
        let permit = ["/usr/lib/x86_64-linux-gnu/security/pam_permit.so", "/usr/lib/aarch64-linux-gnu/security/pam_permit.so"]
            .first { FileManager.default.fileExists(atPath: $0) } ?? "pam_permit.so"
        // The lines README gives, with this test's paths.
        try Data("""
            auth [success=done default=die] \(PAMHost.module.path) helper=\(LatchkeyCommand.binary.path) config=\(host.config.path)
            account required \(permit)
            session required \(permit)

            """.utf8).write(to: host.services.appendingPathComponent("sshd"))
        try? FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let port = try LoopbackPort.free()
        let config = base.appendingPathComponent("sshd_config")
        try Data("""
            ListenAddress 127.0.0.1
            HostKey \(hostKey)
            PidFile none
            UsePAM yes
            KbdInteractiveAuthentication yes
            AuthenticationMethods keyboard-interactive
            PasswordAuthentication no
            PubkeyAuthentication no
            PermitRootLogin yes
            StrictModes no
            LogLevel VERBOSE

            """.utf8).write(to: config)
        let (process, _) = try await ChildProcess.startHelper(
            URL(fileURLWithPath: "/usr/sbin/sshd"), ["-D", "-e", "-f", config.path, "-p", String(port)], name: "sshd",
            environment: ["LD_PRELOAD": PAMHost.pamWrapper, "PAM_WRAPPER": "1", "PAM_WRAPPER_SERVICE_DIR": host.services.path]
        ) { $0.contains("Server listening on 127.0.0.1 port \(port)") }
        return (process, port)
    }

    /// `ssh root@127.0.0.1 echo …` whose keyboard-interactive prompt an askpass script
    /// answers: it writes the prompt (with the code) to a file, then waits for `go`.
    static func ssh(_ host: PAMHost, port: Int) throws -> (SpawnedProcess, Pipe, prompt: URL, go: URL) {
        let prompt = host.directory.url.appendingPathComponent("prompt.txt")
        let go = host.directory.url.appendingPathComponent("go")
        let askpass = host.directory.url.appendingPathComponent("askpass")
        try Data("""
            #!/bin/sh
            printf '%s' "$1" > \(prompt.path).part && mv \(prompt.path).part \(prompt.path)
            while [ ! -e \(go.path) ]; do sleep 0.1; done
            echo

            """.utf8).write(to: askpass)
        chmod(askpass.path, 0o755)
        let output = Pipe()
        let process = try SpawnedProcess(URL(fileURLWithPath: "/usr/bin/ssh"), [
            "-F", "/dev/null", "-o", "PreferredAuthentications=keyboard-interactive", "-o", "StrictHostKeyChecking=no",
            "-o", "UserKnownHostsFile=/dev/null", "-o", "ConnectTimeout=10", "-o", "NumberOfPasswordPrompts=1",
            "-p", String(port), "root@127.0.0.1", "echo", "logged-in-by-pam",
        ], environment: ["PATH": "/usr/bin:/bin", "SSH_ASKPASS": askpass.path, "SSH_ASKPASS_REQUIRE": "force", "DISPLAY": ":0"],
        stdin: .null, stdout: .pipe(output), stderr: .pipe(output))
        return (process, output, prompt, go)
    }

    @Test("ssh with keyboard-interactive: the prompt shows the code; approved with a passkey, root (mapped to alice) is in; denied, ssh is refused")
    func keyboardInteractive() async throws {
        try await ProviderHarness.run(nil, { $0.deviceCodeInterval = 1 }) { provider in
            let host = try await PAMHost.enroll(provider, extra: ["map root = alice"])
            let (alice, vault) = try await PAMModuleTests.approver(provider, "alice")
            _ = vault
            let (server, port) = try await Self.startServer(host)
            defer {
                ChildProcess.stop(server)
                PAMHost.sweepWrapperDirectories(copiesOf: host.services)
            }

            for decision in [DeviceDecision.approve, .deny] {
                let (client, output, prompt, go) = try Self.ssh(host, port: port)
                let run = PAMRun(process: client, output: output)
                var shown = ""
                for _ in 0..<300 where shown.isEmpty {
                    shown = (try? String(contentsOf: prompt, encoding: .utf8)) ?? ""
                    if shown.isEmpty { try await Task.sleep(for: .milliseconds(100)) }
                }
                let range = try #require(shown.range(of: #"latchkey approve [A-Z]{4}-[A-Z]{4}"#, options: .regularExpression), "the prompt: \(shown) \(run.output)")
                #expect(shown.contains("Press Enter once you have approved"))
                let code = String(shown[range].suffix(9))
                _ = try await alice.approveDevice(issuer: provider.issuer, userCode: code, decision: decision) { request in
                    request.hostLogin?.service == "sshd" && request.hostLogin?.user == "root" && request.hostLogin?.remoteHost == "127.0.0.1"
                }
                try Data().write(to: go)
                let (status, text) = try await run.finish(seconds: 60)
                if decision == .approve {
                    #expect(status == 0 && text.contains("logged-in-by-pam"), "\(text)")
                } else {
                    #expect(status != 0 && !text.contains("logged-in-by-pam"), "\(text)")
                }
                try? FileManager.default.removeItem(at: prompt)
                try? FileManager.default.removeItem(at: go)
            }
        }
    }
}
