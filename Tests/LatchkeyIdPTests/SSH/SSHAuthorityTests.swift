import Foundation
import LatchkeyCrypto
@testable import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// The provider's SSH CA (docs/PROTOCOL.md section 12): certificates for a signed-in
/// identity's key, exactly as OpenSSH reads them, revoked through the KRL when the
/// credential they were issued on is, and every refusal the request can earn.
@Suite("Provider: the SSH CA (user certificates, the KRL, refusals)")
struct SSHAuthorityTests {
    static func withCA(
        _ engine: TestStore = .sqlite, _ configure: @escaping @Sendable (inout ProviderConfiguration) -> Void = { _ in },
        _ body: @escaping @Sendable (URL, SoftwareAuthenticator) async throws -> Void
    ) async throws {
        try await ProviderTests.withProvider(engine, {
            $0.sshAuthority = true
            configure(&$0)
        }, body)
    }

    /// A signed-in identity's tokens, with the `ssh` scope unless `scopes` says otherwise.
    static func tokens(_ issuer: URL, _ authenticator: SoftwareAuthenticator, username: String = "ada", scopes: [String] = ["openid", "ssh"]) async throws -> (String, TokenSet) {
        let (identity, _) = try await ProviderTests.bind(issuer, authenticator, username: username)
        return (identity, try await ProviderTests.signIn(issuer, authenticator, client: try ProviderTests.client(issuer), scopes: scopes))
    }

    /// The request for `key`, its proof signed by `signer` (the key itself unless a test
    /// forges it) over `accessToken` (the one presented unless a test lifts a proof).
    static func request(
        _ issuer: URL, key: SigningKey, accessToken: String, signer: SigningKey? = nil, principals: [String]? = nil, lifetime: Int? = nil,
        time: Date = Date(), nonce: Data? = nil, publicKeyLine: String? = nil
    ) throws -> SSHCertificateExchange.Request {
        let publicKey = try SSHPublicKey(key.publicKey)
        let nonce = try nonce ?? SecureRandom.bytes(count: 32)
        let seconds = Int64(time.timeIntervalSince1970)
        let message = try SSHCertificateExchange.signedMessage(
            issuer: issuer.absoluteString, accessToken: accessToken, publicKey: publicKey, principals: principals, lifetime: lifetime,
            time: seconds, nonce: nonce
        )
        let signature = try SSHSignature.sign(message, with: signer ?? key)
        return SSHCertificateExchange.Request(
            publicKey: publicKeyLine ?? publicKey.openSSHLine(comment: "test"), principals: principals, lifetime: lifetime,
            proof: .init(time: seconds, nonce: Base64URL.encode(nonce), signature: Base64URL.encode(signature.wireBlob))
        )
    }

    /// `POST v1/ssh/certificates`: the status, the answer when 201, and the error code.
    static func post(_ issuer: URL, _ request: SSHCertificateExchange.Request, token: String) async throws -> (Int, SSHCertificateExchange.Issued?, String?, String?) {
        let response = try await HTTPExchange.send(
            HTTPMethod.post, issuer.appendingPathComponent(ProtocolPath.sshCertificates),
            headers: ["Authorization": "Bearer \(token)", "Content-Type": ProtocolPath.jsonMediaType], body: try JSONEncoder().encode(request)
        )
        let issued = response.status == 201 ? try JSONDecoder().decode(SSHCertificateExchange.Issued.self, from: response.body) : nil
        return (response.status, issued, response.errorCode, response.headers["www-authenticate"])
    }

    static func get(_ issuer: URL, _ path: String) async throws -> TransportResponse {
        try await HTTPExchange.send(HTTPMethod.get, issuer.appendingPathComponent(path))
    }

    @Test("a signed-in identity gets a certificate for its key, as ssh-keygen -L reads it: its username as principal, a serial, a key id naming identity, credential and serial, 8 h less a minute back, and one audit event", arguments: TestStore.available)
    func issue(engine: TestStore) async throws {
        try await Self.withCA(engine) { issuer, authenticator in
            let (identity, tokens) = try await Self.tokens(issuer, authenticator)
            let caLine = String(decoding: try await Self.get(issuer, ProtocolPath.sshAuthority).body, as: UTF8.self)
            let ca = try SSHPublicKey(openSSHLine: caLine)
            #expect(caLine.hasSuffix("\n") && caLine.split(separator: "\n").count == 1 && ca.algorithm == .ecdsaP256)
            let discovery = try await ProviderTests.request("GET", issuer.appendingPathComponent(ProtocolPath.discovery))
            #expect(discovery.1["ssh_ca_endpoint"]?.stringValue == issuer.appendingPathComponent(ProtocolPath.sshAuthority).absoluteString)
            #expect(discovery.1["scopes_supported"]?.arrayValue?.contains(.string("ssh")) == true)

            for algorithm in [SigningAlgorithm.ed25519, .es256] {
                let key = try SigningKey.generate(algorithm)
                let before = Date()
                let (status, issued, error, _) = try await Self.post(issuer, try Self.request(issuer, key: key, accessToken: tokens.accessToken), token: tokens.accessToken)
                try #require(status == 201, "\(error ?? "-")")
                let answer = try #require(issued)
                let certificate = try SSHCertificate(openSSHLine: answer.certificate)
                let sshKey = try SSHPublicKey(key.publicKey)
                #expect(certificate.isSignatureValid && certificate.signatureKey == ca && certificate.publicKey == sshKey)
                #expect(certificate.principals == ["ada"] && answer.principals == ["ada"] && certificate.kind == .user)
                #expect(String(certificate.serial) == answer.serial && certificate.keyID == answer.keyID)
                #expect(answer.keyID.hasPrefix("latchkey identity=\(identity) credential=") && answer.keyID.hasSuffix(" serial=\(answer.serial)"))
                #expect(abs(Double(certificate.validAfter) - (before.timeIntervalSince1970 - 60)) < 5)
                #expect(abs(Double(certificate.validBefore) - (before.timeIntervalSince1970 + 8 * 3600)) < 5)
                #expect(certificate.criticalOptions.isEmpty && certificate.extensions == SSHCertificate.standardUserExtensions)

                let directory = try TemporaryDirectory()
                let file = directory.url.appendingPathComponent("id-cert.pub")
                try Data((answer.certificate + "\n").utf8).write(to: file)
                let shown = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/ssh-keygen"), ["-L", "-f", file.path])
                #expect(shown.status == 0 && shown.stdout.contains("Key ID: \"\(answer.keyID)\"") && shown.stdout.contains("Serial: \(answer.serial)"), "\(shown.stdout)\(shown.stderr)")
                #expect(shown.stdout.contains("Signing CA: ECDSA \(ca.fingerprint)") && shown.stdout.contains("Principals: \n                ada\n"))
            }
            let events = try await AuditLogTests.events(issuer, type: AuditEventType.sshCertificateIssued.rawValue)
            #expect(events.count == 2 && events.allSatisfy { $0.subject == identity && $0.actor.id == identity && $0.client == "latchkey-cli" })
            let details = try #require(events.first?.details)
            #expect(details.principals == ["ada"] && details.fingerprint?.hasPrefix("SHA256:") == true && details.serial != nil && details.validBefore != nil)
            let raw = String(decoding: try JSONEncoder().encode(events), as: UTF8.self)
            #expect(!raw.contains(tokens.accessToken), "no token in an event")
        }
    }

    @Test("the KRL lists a certificate once its credential is revoked or its identity deleted, and ssh-keygen -Q agrees", arguments: TestStore.available)
    func revocation(engine: TestStore) async throws {
        try await Self.withCA(engine) { issuer, authenticator in
            let (identity, tokens) = try await Self.tokens(issuer, authenticator)
            let key = try SigningKey.generate(.ed25519)
            let (_, issued, _, _) = try await Self.post(issuer, try Self.request(issuer, key: key, accessToken: tokens.accessToken), token: tokens.accessToken)
            let certificate = try #require(issued).certificate
            let directory = try TemporaryDirectory()
            let certificateFile = directory.url.appendingPathComponent("id-cert.pub")
            try Data((certificate + "\n").utf8).write(to: certificateFile)
            func query(_ certificateFile: URL) async throws -> Int32 {
                let list = try await Self.get(issuer, ProtocolPath.sshRevocations)
                #expect(list.status == 200 && list.headers["content-type"] == "application/octet-stream")
                let file = directory.url.appendingPathComponent("krl")
                try list.body.write(to: file)
                return try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/ssh-keygen"), ["-Q", "-f", file.path, certificateFile.path]).status
            }
            #expect(try await query(certificateFile) == 0, "not revoked yet")
            let listed = try #require(try await ProviderTests.admin(issuer).call(AdminAPI.credentials, identity).answer)
            let credential = try #require(listed.credentials.first?.id)
            #expect(try await ProviderTests.admin(issuer).call(AdminAPI.revokeCredential, credential).status == 200)
            #expect(try await query(certificateFile) == 1, "revoked with its credential")

            // Another identity's certificate, then the identity deleted.
            let other = try ProviderTests.newAuthenticator(directory.url.appendingPathComponent("grace"))
            let (grace, graceTokens) = try await Self.tokens(issuer, other, username: "grace")
            let graceKey = try SigningKey.generate(.es256)
            let (_, graceIssued, _, _) = try await Self.post(
                issuer, try Self.request(issuer, key: graceKey, accessToken: graceTokens.accessToken), token: graceTokens.accessToken
            )
            let graceFile = directory.url.appendingPathComponent("grace-cert.pub")
            try Data((try #require(graceIssued).certificate + "\n").utf8).write(to: graceFile)
            #expect(try await query(graceFile) == 0)
            #expect(try await ProviderTests.admin(issuer).call(AdminAPI.deleteIdentity, grace).status == 200)
            #expect(try await query(graceFile) == 1, "revoked with its identity")
            #expect(try await query(certificateFile) == 1)
        }
    }

    @Test("latchkey admin ssh-ca prints the CA line sshd takes; latchkey admin set-ssh-principals grants principals and refuses a comma")
    func commandLine() async throws {
        try await Self.withCA { issuer, authenticator in
            let (identity, _) = try await ProviderTests.bind(issuer, authenticator)
            let environment = ["LATCHKEY_ADMIN_TOKEN": ProviderTests.adminToken]
            let printed = try await LatchkeyCommand.run(["admin", "ssh-ca", "--idp", issuer.absoluteString])
            let served = String(decoding: try await Self.get(issuer, ProtocolPath.sshAuthority).body, as: UTF8.self)
            #expect(printed.status == 0 && printed.stdout == served, "\(printed.stdout) \(printed.stderr)")
            let granted = try await LatchkeyCommand.run(
                ["admin", "set-ssh-principals", "--idp", issuer.absoluteString, identity, "deploy", "backup"], environment: environment
            )
            #expect(granted.status == 0 && granted.stdout.contains("Principals: ada backup deploy"), "\(granted.stdout) \(granted.stderr)")
            let refused = try await LatchkeyCommand.run(["admin", "set-ssh-principals", "--idp", issuer.absoluteString, identity, "a,b"], environment: environment)
            #expect(refused.status != 0)
        }
    }

    @Test("configured critical options (force-command, source-address) are in every user certificate; serve refuses a source-address sshd could not read")
    func criticalOptions() async throws {
        try await Self.withCA(.sqlite, {
            $0.sshForceCommand = "/usr/bin/true"
            $0.sshSourceAddress = "10.0.0.0/8,127.0.0.1"
        }) { issuer, authenticator in
            let (_, tokens) = try await Self.tokens(issuer, authenticator)
            let (status, issued, _, _) = try await Self.post(issuer, try Self.request(issuer, key: try SigningKey.generate(.ed25519), accessToken: tokens.accessToken), token: tokens.accessToken)
            #expect(status == 201)
            let certificate = try SSHCertificate(openSSHLine: try #require(issued).certificate)
            #expect(certificate.criticalOptions == [.init("force-command", "/usr/bin/true"), .init("source-address", "10.0.0.0/8,127.0.0.1")])
        }
        for (option, value) in [("--ssh-source-address", "10.0.0.0/8,not-a-network"), ("--ssh-source-address", ""), ("--ssh-force-command", "")] {
            let refused = try await LatchkeyCommand.run(["serve", "--ssh-ca", option, value], environment: ["LATCHKEY_ADMIN_TOKEN": ProviderTests.adminToken])
            #expect(refused.status != 0 && refused.stderr.contains(option), "\(option) \(value.debugDescription): \(refused.stderr)")
        }
    }
}
