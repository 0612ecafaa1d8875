import Foundation
import Glibc
import Latchkey
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Synchronization
import Testing

extension HostNSSTests {
    /// A real `sshd` on a host of the fleet, configured with the README's lines ("A fleet of
    /// hosts"): the provider's CA in `TrustedUserCAKeys`, `latchkey host principals` as the
    /// `AuthorizedPrincipalsCommand`, and `pam_latchkey` in the account and session steps. No
    /// `useradd`, no `authorized_keys`, no password.
    @Suite("latchkey host: ssh into a fleet host with a passkey-issued certificate", .serialized)
    struct HostSSHTests {
        /// sshd with the README's lines, this test's paths; its PAM service under pam_wrapper.
        static func startServer(_ host: HostFleet, binary: URL) async throws -> (SpawnedProcess, Int) {
            guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/sshd") else { try TestEnvironment.unavailable("no /usr/sbin/sshd (.ci/run installs openssh-server)") }
            try PAMHost.requireTools()
            let base = host.directory.url
            let hostKey = base.appendingPathComponent("host_ed25519").path
            let made = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/ssh-keygen"), ["-q", "-t", "ed25519", "-N", "", "-f", hostKey])
            try #require(made.status == 0, "\(made.stderr)")
            // The CA keys and the KRL are the files the daemon keeps.
            let (ca, krl) = (host.sshCAFile, host.sshKRLFile)
            let kept = try await HostFleet.eventually { FileManager.default.fileExists(atPath: ca.path) && FileManager.default.fileExists(atPath: krl.path) }
            try #require(kept, "the daemon wrote the provider's SSH CA keys and KRL: \(host.journal())")
            let services = base.appendingPathComponent("pam.d")
            try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
            let deny = ["/usr/lib/x86_64-linux-gnu/security/pam_deny.so", "/usr/lib/aarch64-linux-gnu/security/pam_deny.so"]
                .first { FileManager.default.fileExists(atPath: $0) } ?? "pam_deny.so"
            try Data("""
                auth required \(deny)
                account required \(PAMHost.module.path) helper=\(binary.path) config=\(host.config.path)
                session required \(PAMHost.module.path) helper=\(binary.path) config=\(host.config.path)

                """.utf8).write(to: services.appendingPathComponent("sshd"))
            try? FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            let port = try LoopbackPort.free()
            let config = base.appendingPathComponent("sshd_config")
            try Data("""
                ListenAddress 127.0.0.1
                HostKey \(hostKey)
                PidFile none
                TrustedUserCAKeys \(ca.path)
                RevokedKeys \(krl.path)
                AuthorizedKeysFile none
                AuthorizedPrincipalsCommand \(binary.path) host principals %u --config \(host.config.path)
                AuthorizedPrincipalsCommandUser nobody
                PubkeyAuthentication yes
                PasswordAuthentication no
                KbdInteractiveAuthentication no
                UsePAM yes
                LogLevel VERBOSE

                """.utf8).write(to: config)
            let (process, _) = try await ChildProcess.startHelper(
                URL(fileURLWithPath: "/usr/sbin/sshd"), ["-D", "-e", "-f", config.path, "-p", String(port)], name: "sshd",
                environment: ["LD_PRELOAD": PAMHost.pamWrapper, "PAM_WRAPPER": "1", "PAM_WRAPPER_SERVICE_DIR": services.path]
            ) { $0.contains("Server listening on 127.0.0.1 port \(port)") }
            return (process, port)
        }

        /// Stops sshd, then removes the `/tmp/pam.X` folders pam_wrapper left for its
        /// per-connection children (which end with `_exit`).
        static func stop(_ server: SpawnedProcess, _ host: HostFleet) {
            ChildProcess.stop(server)
            PAMHost.sweepWrapperDirectories(copiesOf: host.directory.url.appendingPathComponent("pam.d"))
        }

        /// `ssh user@127.0.0.1 COMMAND` through the agent at `agentSocket`.
        static func ssh(port: Int, user: String, agentSocket: String, _ command: String) async throws -> ChildProcess.Output {
            try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/ssh"), [
                "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "IdentityFile=none", "-o", "ConnectTimeout=10",
                "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-p", String(port), "\(user)@127.0.0.1", command,
            ], environment: ["SSH_AUTH_SOCK": agentSocket])
        }

        /// The latchkey binary where sshd takes it: a folder of root's that no one else may
        /// write, up to `/` (sshd refuses a command under /tmp), and that `nobody` may enter.
        static func installedBinary() throws -> (URL, () -> Void) {
            let folder = "/run/latchkey-test-\(UInt32.random(in: 0...UInt32.max))"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
            let binary = URL(fileURLWithPath: folder).appendingPathComponent("latchkey")
            try FileManager.default.copyItem(at: LatchkeyCommand.binary, to: binary)
            chmod(binary.path, 0o755)
            return (binary, { try? FileManager.default.removeItem(atPath: folder) })
        }

        @Test("alice logs in with her passkey-issued certificate through latchkey agent, with no useradd, into a new home owned by her uid, and id shows her groups; bob, whose group has no access here, is refused; carol, whose credential is revoked, is refused once the daemon's sync brings the KRL; after alice leaves ops and the host syncs, she is refused too")
        func login() async throws {
            try HostFleet.requireNSS()
            try await ProviderHarness.run(nil, { $0.sshAuthority = true }) { provider in
                let host = try await HostFleet.enroll(provider)
                let alice = try await host.account(provider, "alice")
                let bob = try await host.account(provider, "bob")
                let carol = try await host.account(provider, "carol")
                let ops = try await HostFleet.group(provider, "ops", members: ["alice", "carol"], label: "web", sudo: true)
                _ = try await HostFleet.group(provider, "dev", members: ["bob"])
                let daemon = try await host.run()
                defer { ChildProcess.stop(daemon) }

                // Each person's vault, credential, certificate and agent.
                var agents: [(KeyAgent, String)] = []
                var vaults: [TemporaryVault] = []
                defer {
                    agents.forEach { $0.0.stop() }
                    vaults.forEach { $0.cleanUp() }
                }
                var credentials: [String] = []
                for (name, bindURL) in [("alice", alice.bindURL), ("bob", bob.bindURL), ("carol", carol.bindURL)] {
                    let vault = try TemporaryVault()
                    vaults.append(vault)
                    let embedded = try vault.embedded(allowing: [provider.host])
                    credentials.append(try await embedded.registerCredential(from: bindURL).credential.id)
                    let login = try await embedded.sshLogin(issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback)
                    #expect(login.principals == [name])
                    agents.append(try await SSHLoginTests.agent(vault, in: vault.temporary))
                }
                let (binary, removeBinary) = try Self.installedBinary()
                defer { removeBinary() }
                let (server, port) = try await Self.startServer(host, binary: binary)
                defer { Self.stop(server, host) }

                let home = host.homeBase.appendingPathComponent("alice").path
                #expect(!FileManager.default.fileExists(atPath: home))
                let inside = try await Self.ssh(port: port, user: "alice", agentSocket: agents[0].1, "id; pwd; stat -c '%u:%g:%a' .")
                #expect(inside.status == 0, "\(inside.stderr)")
                let uid = alice.account.uid
                #expect(inside.stdout == "uid=\(uid)(alice) gid=\(uid)(alice) groups=\(uid)(alice),\(ops.gid)(ops)\n\(home)\n\(uid):\(uid):700\n", "\(inside.stdout)")
                #expect(FileManager.default.fileExists(atPath: home + "/.profile"), "the home was made from /etc/skel")

                let refused = try await Self.ssh(port: port, user: "bob", agentSocket: agents[1].1, "id")
                #expect(refused.status != 0 && !refused.stdout.contains("uid="), "bob's group has no access to this host")

                // carol's credential is revoked: the daemon's next sync brings the KRL that names
                // her certificate, and sshd refuses it, though she is still in ops.
                let before = try await Self.ssh(port: port, user: "carol", agentSocket: agents[2].1, "id")
                #expect(before.status == 0, "\(before.stderr)")
                #expect(try await provider.admin.call(AdminAPI.revokeCredential, credentials[2]).status == 200)
                #expect(try await host.command(["sync", "--now"]).status == 0)
                #expect(host.journal().contains("SSH KRL updated"))
                let revoked = try await Self.ssh(port: port, user: "carol", agentSocket: agents[2].1, "id")
                #expect(revoked.status != 0 && !revoked.stdout.contains("uid="), "carol's certificate is on the KRL")
                #expect(try await HostFleet.getent(["passwd", "carol"]).status == 0, "refused by the KRL, not by the directory")

                let removed = try await provider.admin.call(AdminAPI.removeGroupMember, "ops", "alice")
                #expect(removed.status == 200)
                #expect(try await host.command(["sync", "--now"]).status == 0)
                let after = try await Self.ssh(port: port, user: "alice", agentSocket: agents[0].1, "id")
                #expect(after.status != 0 && !after.stdout.contains("uid="), "alice left ops: \(after.stdout)")
            }
        }

        @Test("with the provider stopped, alice still logs in through sshd from the host's cache, until --offline-max-age; then she does not")
        func offline() async throws {
            try HostFleet.requireNSS()
            let vault = try TemporaryVault()
            defer { vault.cleanUp() }
            let made = Mutex<(HostFleet, SpawnedProcess)?>(nil)
            try await ProviderHarness.run(nil, { $0.sshAuthority = true }) { provider in
                let host = try await HostFleet.enroll(provider)
                let alice = try await host.account(provider, "alice")
                _ = try await HostFleet.group(provider, "ops", members: ["alice"], label: "web")
                let embedded = try vault.embedded(allowing: [provider.host])
                _ = try await embedded.registerCredential(from: alice.bindURL)
                _ = try await embedded.sshLogin(issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback)
                let daemon = try await host.run(["--offline-max-age", "20"])
                made.withLock { $0 = (host, daemon) }
                let kept = try await HostFleet.eventually { FileManager.default.fileExists(atPath: host.sshKRLFile.path) }
                try #require(kept, "the daemon wrote the KRL")
            }
            // The provider is gone from here on.
            let (host, daemon) = try #require(made.withLock { $0 })
            defer { ChildProcess.stop(daemon) }
            let (agent, socket) = try await SSHLoginTests.agent(vault, in: vault.temporary)
            defer { agent.stop() }
            let (binary, removeBinary) = try Self.installedBinary()
            defer { removeBinary() }
            let (server, port) = try await Self.startServer(host, binary: binary)
            defer { Self.stop(server, host) }

            let offline = try await Self.ssh(port: port, user: "alice", agentSocket: socket, "id -un")
            #expect(offline.status == 0 && offline.stdout == "alice\n", "\(offline.stderr)")
            #expect(try await HostFleet.eventually(40) { try await HostFleet.getent(["passwd", "alice"]).status == 2 })
            let expired = try await Self.ssh(port: port, user: "alice", agentSocket: socket, "id -un")
            #expect(expired.status != 0 && !expired.stdout.contains("alice"), "past the offline limit: \(expired.stdout)")
        }
    }
}
