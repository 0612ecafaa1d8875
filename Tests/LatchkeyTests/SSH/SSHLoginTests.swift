import Foundation
import Glibc
@testable import Latchkey
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Logging
import Testing

/// Passwordless SSH end to end (docs/guides/ssh.md; docs/PROTOCOL.md section 12):
/// `latchkey ssh login`'s work through the facade, the agent's ssh-agent socket, and the
/// real OpenSSH: `sshd` started on a free loopback port with a config of its own that
/// trusts only the provider's CA and reads its KRL, and `ssh` through `SSH_AUTH_SOCK`.
@Suite("Passwordless SSH: a certificate from a sign-in, served by the agent, accepted by sshd", .serialized)
struct SSHLoginTests {
    /// A running `sshd` trusting `caLine` and the KRL at `krl`, for the user running the tests.
    struct SSHServer {
        let process: SpawnedProcess
        let port: Int
        let directory: TemporaryDirectory
        let krl: URL

        func stop() { ChildProcess.stop(process) }
    }

    /// `certifyHost`, given the host key's `.pub` line, answers its host certificate line.
    static func startServer(caLine: String, certifyHost: (@Sendable (String) async throws -> String)? = nil) async throws -> SSHServer {
        if getuid() != 0 { try TestEnvironment.unavailable("sshd with its own config runs as root (CI runs the tests as root)") }
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/sshd") else { try TestEnvironment.unavailable("no /usr/sbin/sshd (.ci/run installs openssh-server)") }
        let directory = try TemporaryDirectory()
        let base = directory.url
        let hostKey = base.appendingPathComponent("host_ed25519").path
        let made = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/ssh-keygen"), ["-q", "-t", "ed25519", "-N", "", "-f", hostKey])
        try #require(made.status == 0, "\(made.stderr)")
        var hostCertificate = ""
        if let certifyHost {
            let file = base.appendingPathComponent("host_ed25519-cert.pub")
            try Data((try await certifyHost(try String(contentsOfFile: hostKey + ".pub", encoding: .utf8)) + "\n").utf8).write(to: file)
            hostCertificate = "HostCertificate \(file.path)"
        }
        let ca = base.appendingPathComponent("ca.pub")
        try Data(caLine.utf8).write(to: ca)
        let krl = base.appendingPathComponent("revoked.krl")
        try Data().write(to: krl)
        // sshd's privilege separation needs its empty directory.
        try? FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let port = try LoopbackPort.free()
        let config = base.appendingPathComponent("sshd_config")
        try Data("""
            ListenAddress 127.0.0.1
            HostKey \(hostKey)
            \(hostCertificate)
            PidFile none
            TrustedUserCAKeys \(ca.path)
            RevokedKeys \(krl.path)
            AuthorizedKeysFile none
            AuthorizedPrincipalsFile none
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            PubkeyAuthentication yes
            PermitRootLogin prohibit-password
            UsePAM no
            StrictModes no
            LogLevel VERBOSE

            """.utf8).write(to: config)
        let (process, _) = try await ChildProcess.startHelper(
            URL(fileURLWithPath: "/usr/sbin/sshd"), ["-D", "-e", "-f", config.path, "-p", String(port)], name: "sshd"
        ) { $0.contains("Server listening on 127.0.0.1 port \(port)") }
        return SSHServer(process: process, port: port, directory: directory, krl: krl)
    }

    /// `ssh user@127.0.0.1 echo` through the agent at `agentSocket`: its status and output.
    /// With `knownHosts`, the host must prove itself against that file
    /// (`StrictHostKeyChecking yes`); without, any host key is taken.
    static func ssh(_ server: SSHServer, user: String, agentSocket: String, knownHosts: URL? = nil, extra: [String] = []) async throws -> ChildProcess.Output {
        let hostChecking = knownHosts.map { ["-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile=\($0.path)"] }
            ?? ["-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null"]
        return try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/ssh"), [
            "-F", "/dev/null", "-o", "BatchMode=yes", "-o", "IdentityFile=none", "-o", "ConnectTimeout=10",
        ] + hostChecking + extra + ["-p", String(server.port), "\(user)@127.0.0.1", "echo", "logged-in-by-certificate"], environment: ["SSH_AUTH_SOCK": agentSocket])
    }

    /// An agent over `vault` with its ssh-agent socket; the socket's path.
    static func agent(_ vault: TemporaryVault, in scratch: TemporaryDirectory) async throws -> (KeyAgent, String) {
        var configuration = KeyAgent.Configuration(
            vaultDirectory: vault.directory.appendingPathComponent("vault"), reopenSource: .keyFile(vault.keyFile), logger: Logger(label: "ssh-agent-test")
        )
        configuration.idleTimeout = nil
        let agent = try KeyAgent(configuration: configuration, openingWith: .keyFile(vault.keyFile))
        _ = try agent.listen(at: scratch.url.appendingPathComponent("agent.sock").path, environment: [:])
        let sshSocket = try agent.listenSSH(at: scratch.url.appendingPathComponent("ssh-agent.sock").path, environment: [:])
        Blocking.detached { await agent.serve() }
        return (agent, sshSocket)
    }

    static var currentUser: String {
        guard let entry = getpwuid(getuid()), let name = entry.pointee.pw_name else { return "root" }
        return String(cString: name)
    }

    @Test(
        "ssh through latchkey agent's SSH_AUTH_SOCK logs in with the certificate of a software key and of a TPM key; another principal is refused; after the credential is revoked and the KRL fetched again, the same certificate is refused",
        arguments: [KeyProtection.software, .tpm]
    )
    func login(protection: KeyProtection) async throws {
        if protection == .tpm, (ProcessInfo.processInfo.environment[TPM.locationVariable] ?? "").isEmpty { try TestEnvironment.unavailable("no TPM named (TPM2OPENSSL_TCTI; .ci/run starts a swtpm)") }
        try await ProviderHarness.withVault({ $0.sshAuthority = true }) { provider, vault in
            let setting: KeyProtectionSetting = protection == .tpm ? .tpm : .software
            let embedded = try vault.embedded(allowing: [provider.host], configure: { $0.keyProtection = setting })
            let (identity, bindURL) = try await provider.createIdentity("ada")
            let credential = try await embedded.registerCredential(from: bindURL)
            let user = Self.currentUser
            #expect(try await provider.admin.call(AdminAPI.setSSHPrincipals, identity, body: .init(principals: [user])).status == 200)

            let login = try await embedded.sshLogin(issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback, principals: [user])
            #expect(login.principals == [user] && login.keyProtection == protection)
            #expect(login.publicKey.hasPrefix(protection == .tpm ? "ecdsa-sha2-nistp256 " : "ssh-ed25519 "))
            let listed = try embedded.sshKeys()
            #expect(listed.count == 1 && listed.first?.serial == login.serial && listed.first?.principals == [user])

            // The agent over the same vault, its ssh-agent socket for SSH_AUTH_SOCK.
            let scratch = try TemporaryDirectory()
            let (agent, sshSocket) = try await Self.agent(vault, in: scratch)
            defer { agent.stop() }

            let added = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/ssh-add"), ["-L"], environment: ["SSH_AUTH_SOCK": sshSocket])
            let lines = added.stdout.split(separator: "\n").map(String.init)
            #expect(added.status == 0 && lines.count == 2, "\(added.stdout) \(added.stderr)")
            let type = protection == .tpm ? "ecdsa-sha2-nistp256" : "ssh-ed25519"
            #expect(lines.first?.hasPrefix("\(type)-cert-v01@openssh.com ") == true && lines.last?.hasPrefix("\(type) ") == true)

            let caLine = String(decoding: try await HTTPExchange.send(HTTPMethod.get, provider.issuer.appendingPathComponent(ProtocolPath.sshAuthority)).body, as: UTF8.self)
            let server = try await Self.startServer(caLine: caLine)
            defer { server.stop() }
            let first = try await Self.ssh(server, user: user, agentSocket: sshSocket)
            #expect(first.status == 0 && first.stdout.contains("logged-in-by-certificate"), "\(first.stderr)")
            let other = try await Self.ssh(server, user: "nobody", agentSocket: sshSocket)
            #expect(other.status != 0 && !other.stdout.contains("logged-in-by-certificate"), "a principal the certificate does not name")

            let revoked = try await provider.admin.call(AdminAPI.revokeCredential, credential.credential.id)
            #expect(revoked.status == 200)
            let krl = try await HTTPExchange.send(HTTPMethod.get, provider.issuer.appendingPathComponent(ProtocolPath.sshRevocations))
            try krl.body.write(to: server.krl)
            let after = try await Self.ssh(server, user: user, agentSocket: sshSocket)
            #expect(after.status != 0 && !after.stdout.contains("logged-in-by-certificate"), "the same unexpired certificate, now on the KRL")
        }
    }

    /// Every member of `json` named like a time (`…At`, `valid…`, `time`, `expires…`), with
    /// its value unless it is an RFC 3339 UTC string.
    static func timesNotInRFC3339(_ json: JSONValue, path: String = "") -> [String] {
        switch json {
        case .object(let members):
            return members.sorted { $0.key < $1.key }.flatMap { name, value -> [String] in
                let timeLike = name.hasSuffix("At") || name.hasPrefix("valid") || name == "time" || name.hasPrefix("expires")
                if timeLike, !(value.stringValue.map { $0.hasSuffix("Z") && AuditEvent.parseTime($0) != nil } ?? (value == .null)) {
                    return ["\(path).\(name) = \(value)"]
                }
                return timesNotInRFC3339(value, path: path + "." + name)
            }
        case .array(let items):
            return items.enumerated().flatMap { timesNotInRFC3339($1, path: path + "[\($0)]") }
        default:
            return []
        }
    }

    @Test("every --json output names a time one way, RFC 3339 in UTC: ssh login, bind, admin create-identity, list-identities, list-credentials and outbox")
    func oneTimeFormat() async throws {
        try await ProviderHarness.run(nil, { $0.sshAuthority = true }) { provider in
            let scratch = try TemporaryDirectory()
            let environment = try CommandLineTests.vaultKeyEnvironment(scratch, "vault")
            let admin = ["--idp", provider.issuer.absoluteString, "--json"]
            let adminEnvironment = ["LATCHKEY_ADMIN_TOKEN": ProviderHarness.adminToken]
            let created = try await LatchkeyCommand.run(["admin", "create-identity", "--username", "ada"] + admin, environment: adminEnvironment)
            try #require(created.status == 0, "\(created.stderr)")
            let createdJSON = try JSONValue(json: Data(created.stdout.utf8))
            let bindURL = try #require(createdJSON["bindURL"]?.stringValue)
            let identity = try #require(createdJSON["identity"]?["id"]?.stringValue)
            let bound = try await LatchkeyCommand.run(["bind", bindURL, "--json"], environment: environment)
            let login = try await LatchkeyCommand.run(["ssh", "login", "--issuer", provider.issuer.absoluteString, "--json"], environment: environment)
            let identities = try await LatchkeyCommand.run(["admin", "list-identities"] + admin, environment: adminEnvironment)
            let credentials = try await LatchkeyCommand.run(["admin", "list-credentials", identity] + admin, environment: adminEnvironment)
            let outbox = try await LatchkeyCommand.run(["admin", "outbox"] + admin, environment: adminEnvironment)
            for (name, run) in [("create-identity", created), ("bind", bound), ("ssh login", login), ("list-identities", identities), ("list-credentials", credentials), ("outbox", outbox)] {
                try #require(run.status == 0, "\(name): \(run.stderr)")
                let json = try JSONValue(json: Data(run.stdout.utf8))
                #expect(Self.timesNotInRFC3339(json).isEmpty, "\(name): \(Self.timesNotInRFC3339(json))")
            }
            let validBefore = try #require(try JSONValue(json: Data(login.stdout.utf8))["validBefore"]?.stringValue.flatMap(AuditEvent.parseTime))
            #expect(abs(validBefore.timeIntervalSinceNow - 8 * 3600) < 120, "\(validBefore)")
        }
    }

    @Test("latchkey ssh login --json gets a certificate ssh-keygen -L reads; latchkey ssh list shows the key, its principals and expiry; a principal with a comma is refused before any request")
    func commandLine() async throws {
        try await ProviderHarness.run(nil, { $0.sshAuthority = true }) { provider in
            let scratch = try TemporaryDirectory()
            let environment = try CommandLineTests.vaultKeyEnvironment(scratch, "vault")
            let (_, bindURL) = try await provider.createIdentity("ada")
            let bound = try await LatchkeyCommand.run(["bind", bindURL.absoluteString], environment: environment)
            try #require(bound.status == 0, "\(bound.stderr)")
            let login = try await LatchkeyCommand.run(["ssh", "login", "--issuer", provider.issuer.absoluteString, "--lifetime", "1h", "--json"], environment: environment)
            try #require(login.status == 0, "\(login.stderr)")
            let answer = try JSONValue(json: Data(login.stdout.utf8))
            let certificate = try #require(answer["certificate"]?.stringValue)
            let file = scratch.url.appendingPathComponent("id-cert.pub")
            try Data((certificate + "\n").utf8).write(to: file)
            let shown = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/ssh-keygen"), ["-L", "-f", file.path])
            #expect(shown.status == 0 && shown.stdout.contains("ssh-ed25519-cert-v01@openssh.com user certificate") && shown.stdout.contains("                ada\n"), "\(shown.stdout)")
            let parsed = try SSHCertificate(openSSHLine: certificate)
            #expect(parsed.validBefore - parsed.validAfter == 3660)

            let listed = try await LatchkeyCommand.run(["ssh", "list"], environment: environment)
            #expect(listed.status == 0 && listed.stdout.contains(" ada ") && listed.stdout.contains("valid until") && listed.stdout.contains("ssh-ed25519 "), "\(listed.stdout)")
            let refused = try await LatchkeyCommand.run(["ssh", "login", "--issuer", provider.issuer.absoluteString, "--principal", "ada,root"], environment: environment)
            #expect(refused.status != 0 && refused.stderr.contains("--principal"), "\(refused.stderr)")
        }
    }

    @Test("a host certificate from latchkey admin ssh-host-certificate lets ssh connect with StrictHostKeyChecking yes and only an @cert-authority line; a certificate that expired is refused by sshd")
    func hostCertificateAndExpiry() async throws {
        try await ProviderHarness.withVault({ $0.sshAuthority = true }) { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host], configure: { $0.keyProtection = .software })
            let (identity, bindURL) = try await provider.createIdentity("ada")
            _ = try await embedded.registerCredential(from: bindURL)
            let user = Self.currentUser
            #expect(try await provider.admin.call(AdminAPI.setSSHPrincipals, identity, body: .init(principals: [user])).status == 200)
            let login = try await embedded.sshLogin(issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback, principals: [user], lifetime: 60)
            let scratch = try TemporaryDirectory()
            let (agent, sshSocket) = try await Self.agent(vault, in: scratch)
            defer { agent.stop() }

            let caLine = String(decoding: try await HTTPExchange.send(HTTPMethod.get, provider.issuer.appendingPathComponent(ProtocolPath.sshAuthority)).body, as: UTF8.self)
            let issuer = provider.issuer.absoluteString
            let keyFile = scratch.url.appendingPathComponent("host.pub")
            let server = try await Self.startServer(caLine: caLine) { hostKey in
                try Data(hostKey.utf8).write(to: keyFile)
                let signed = try await LatchkeyCommand.run(
                    ["admin", "ssh-host-certificate", "--idp", issuer, "--host", "127.0.0.1", "--host", "localhost", "--public-key", keyFile.path],
                    environment: ["LATCHKEY_ADMIN_TOKEN": ProviderHarness.adminToken]
                )
                try #require(signed.status == 0, "\(signed.stderr)")
                let certificate = try SSHCertificate(openSSHLine: signed.stdout)
                #expect(certificate.kind == .host && certificate.principals == ["127.0.0.1", "localhost"])
                return signed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            defer { server.stop() }
            let knownHosts = scratch.url.appendingPathComponent("known_hosts")
            try Data("@cert-authority * \(caLine)".utf8).write(to: knownHosts)
            let trusted = try await Self.ssh(server, user: user, agentSocket: sshSocket, knownHosts: knownHosts)
            #expect(trusted.status == 0 && trusted.stdout.contains("logged-in-by-certificate"), "\(trusted.stderr)")
            // Another CA in known_hosts: the host is not trusted.
            let otherCA = try SSHPublicKey(try SigningKey.generate(.es256).publicKey).openSSHLine()
            try Data("@cert-authority * \(otherCA)\n".utf8).write(to: knownHosts)
            let untrusted = try await Self.ssh(server, user: user, agentSocket: sshSocket, knownHosts: knownHosts)
            #expect(untrusted.status != 0 && untrusted.stderr.contains("Host key verification failed"), "\(untrusted.stderr)")

            // The user certificate lasts a minute (and began a minute back): once it has
            // expired, sshd refuses it even when ssh presents it itself.
            let certificate = try SSHCertificate(openSSHLine: login.certificate)
            let certificateFile = scratch.url.appendingPathComponent("expired-cert.pub")
            try Data((login.certificate + "\n").utf8).write(to: certificateFile)
            let wait = TimeInterval(certificate.validBefore) - Date().timeIntervalSince1970 + 2
            if wait > 0 { try await Task.sleep(for: .seconds(wait)) }
            let expired = try await Self.ssh(server, user: user, agentSocket: sshSocket, extra: ["-v", "-o", "CertificateFile=\(certificateFile.path)"])
            #expect(expired.status != 0 && !expired.stdout.contains("logged-in-by-certificate"), "\(expired.stderr)")
            #expect(expired.stderr.contains("ED25519-CERT"), "ssh offered the expired certificate, with the agent's key: \(expired.stderr)")
            let listed = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/ssh-add"), ["-L"], environment: ["SSH_AUTH_SOCK": sshSocket])
            #expect(!listed.stdout.contains("-cert-v01@openssh.com"), "the agent no longer offers an expired certificate")
        }
    }

    @Test("a service without a person: its client key's client credentials tokens certify a key of its own for the principal an admin granted the client, and sshd accepts it through the agent; ssh login --client-credentials needs --client-id")
    func serviceCertificate() async throws {
        try await ProviderHarness.withVault({ $0.sshAuthority = true }) { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host], configure: { $0.keyProtection = .software })
            let clientKey = try await embedded.clientKey(issuer: provider.issuer, clientID: "deploy-bot")
            let jwks = try JSONDecoder().decode(JWKSDocument.self, from: clientKey.publicJWKSet)
            let registered = try await provider.admin.call(
                AdminAPI.createClient, body: AdminAPI.Client(id: "deploy-bot", jwks: jwks, grantTypes: ["client_credentials"], scopes: ["ssh"])
            )
            try #require(registered.status == 201)
            let user = Self.currentUser
            #expect(try await provider.admin.call(AdminAPI.setClientSSHPrincipals, "deploy-bot", body: .init(principals: [user])).status == 200)

            let login = try await embedded.sshLogin(issuer: provider.issuer, clientCredentials: "deploy-bot")
            #expect(login.principals == [user] && login.keyID.hasPrefix("latchkey client=deploy-bot serial="))
            #expect(try embedded.sshKeys().map(\.clientID) == ["deploy-bot"])
            let again = try await embedded.sshLogin(issuer: provider.issuer, clientCredentials: "deploy-bot")
            #expect(again.handle == login.handle && again.serial != login.serial, "the same key, a new certificate")

            let scratch = try TemporaryDirectory()
            let (agent, sshSocket) = try await Self.agent(vault, in: scratch)
            defer { agent.stop() }
            let caLine = String(decoding: try await HTTPExchange.send(HTTPMethod.get, provider.issuer.appendingPathComponent(ProtocolPath.sshAuthority)).body, as: UTF8.self)
            let server = try await Self.startServer(caLine: caLine)
            defer { server.stop() }
            let shell = try await Self.ssh(server, user: user, agentSocket: sshSocket)
            #expect(shell.status == 0 && shell.stdout.contains("logged-in-by-certificate"), "\(shell.stderr)")

            let refused = try await LatchkeyCommand.run(["ssh", "login", "--issuer", provider.issuer.absoluteString, "--client-credentials"], environment: [:])
            #expect(refused.status != 0 && refused.stderr.contains("--client-id"), "\(refused.stderr)")
        }
    }

    @Test("kept tokens revoked at the provider: the certificate request's 401 makes sshLogin sign in again and succeed")
    func revokedKeptTokens() async throws {
        try await ProviderHarness.withVault({ $0.sshAuthority = true }) { provider, vault in
            let embedded = try vault.embedded(allowing: [provider.host], configure: { $0.keyProtection = .software })
            let (_, bindURL) = try await provider.createIdentity("ada")
            _ = try await embedded.registerCredential(from: bindURL)
            let first = try await embedded.sshLogin(issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback)
            let kept = try await embedded.validTokens(
                issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback, scopes: ["openid", "ssh"]
            )
            try await embedded.revoke(kept)
            let second = try await embedded.sshLogin(issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback)
            #expect(second.serial != first.serial && second.handle == first.handle, "a new certificate for the same key")
        }
    }
}
