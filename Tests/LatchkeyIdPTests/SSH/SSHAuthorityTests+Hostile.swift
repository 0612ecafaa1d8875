import Foundation
import LatchkeyCrypto
@testable import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// The SSH CA abused (docs/SECURITY.md, "SSH certificates"): each refusal with its error
/// code, and nothing issued.
extension SSHAuthorityTests {
    /// Expects `request` refused with `status` and `code`, and no certificate issued since.
    static func expectRefused(
        _ issuer: URL, _ request: SSHCertificateExchange.Request, token: String, status: Int, code: String, _ comment: Comment? = nil
    ) async throws {
        let (got, issued, error, _) = try await post(issuer, request, token: token)
        #expect(got == status && error == code && issued == nil, "\(comment.map { "\($0)" } ?? ""): \(got) \(error ?? "-")")
    }

    static func issuedCount(_ issuer: URL) async throws -> Int {
        try await AuditLogTests.events(issuer, type: AuditEventType.sshCertificateIssued.rawValue).count
    }

    @Test("a proof signed by another key than the one to certify is invalid_ssh_proof")
    func proofForAnotherKey() async throws {
        try await Self.withCA { issuer, authenticator in
            let (_, tokens) = try await Self.tokens(issuer, authenticator)
            let request = try Self.request(issuer, key: try SigningKey.generate(.ed25519), accessToken: tokens.accessToken, signer: try SigningKey.generate(.ed25519))
            try await Self.expectRefused(issuer, request, token: tokens.accessToken, status: 400, code: "invalid_ssh_proof")
            #expect(try await Self.issuedCount(issuer) == 0)
        }
    }

    @Test("a proof sent twice is refused the second time; one made for another token, or too old, is refused outright")
    func replayedProof() async throws {
        try await Self.withCA { issuer, authenticator in
            let (_, tokens) = try await Self.tokens(issuer, authenticator)
            let key = try SigningKey.generate(.es256)
            let request = try Self.request(issuer, key: key, accessToken: tokens.accessToken)
            #expect(try await Self.post(issuer, request, token: tokens.accessToken).0 == 201)
            try await Self.expectRefused(issuer, request, token: tokens.accessToken, status: 400, code: "invalid_ssh_proof", "replayed")
            let lifted = try Self.request(issuer, key: key, accessToken: "another-token")
            try await Self.expectRefused(issuer, lifted, token: tokens.accessToken, status: 400, code: "invalid_ssh_proof", "another token")
            let stale = try Self.request(issuer, key: key, accessToken: tokens.accessToken, time: Date().addingTimeInterval(-600))
            try await Self.expectRefused(issuer, stale, token: tokens.accessToken, status: 400, code: "invalid_ssh_proof", "ten minutes old")
            let short = try Self.request(issuer, key: key, accessToken: tokens.accessToken, nonce: Data(repeating: 1, count: 8))
            try await Self.expectRefused(issuer, short, token: tokens.accessToken, status: 400, code: "invalid_ssh_proof", "an 8-byte nonce")
            #expect(try await Self.issuedCount(issuer) == 1)
        }
    }

    @Test("RSA, DSA-sized and malformed keys, a key line naming another type and an oversized key blob are invalid_ssh_key")
    func otherKeyTypes() async throws {
        try await Self.withCA { issuer, authenticator in
            let (_, tokens) = try await Self.tokens(issuer, authenticator)
            let directory = try TemporaryDirectory()
            let path = directory.url.appendingPathComponent("rsa").path
            let made = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/ssh-keygen"), ["-q", "-t", "rsa", "-b", "3072", "-N", "", "-f", path])
            try #require(made.status == 0)
            let rsa = try String(contentsOfFile: path + ".pub", encoding: .utf8)
            let key = try SigningKey.generate(.ed25519)
            let blob = try SSHPublicKey(key.publicKey).wireBlob
            for line in [
                rsa, "ssh-ed25519 " + Data(repeating: 0x41, count: 70_000).base64EncodedString(), "ecdsa-sha2-nistp256 " + blob.base64EncodedString(),
                "ssh-ed25519 not-base64!", "",
            ] {
                let request = try Self.request(issuer, key: key, accessToken: tokens.accessToken, publicKeyLine: line)
                let (status, _, error, _) = try await Self.post(issuer, request, token: tokens.accessToken)
                #expect((status == 400 && error == "invalid_ssh_key") || status == 413, "\(line.prefix(30)): \(status) \(error ?? "-")")
            }
            #expect(try await Self.issuedCount(issuer) == 0)
        }
    }

    @Test("principals with a comma, a newline or a NUL are invalid_request; one not granted is principal_not_granted until an admin grants it")
    func principals() async throws {
        try await Self.withCA { issuer, authenticator in
            let (identity, tokens) = try await Self.tokens(issuer, authenticator)
            let key = try SigningKey.generate(.ed25519)
            for principal in ["ada,root", "ada\nroot", "ada\u{0}", " ", "ada root"] {
                let request = try Self.request(issuer, key: key, accessToken: tokens.accessToken, principals: [principal])
                try await Self.expectRefused(issuer, request, token: tokens.accessToken, status: 400, code: "invalid_request", "\(principal.debugDescription)")
            }
            let root = try Self.request(issuer, key: key, accessToken: tokens.accessToken, principals: ["root"])
            try await Self.expectRefused(issuer, root, token: tokens.accessToken, status: 403, code: "principal_not_granted")
            let granted = try await ProviderTests.admin(issuer).call(AdminAPI.setSSHPrincipals, identity, body: .init(principals: ["deploy"]))
            #expect(granted.answer?.principals == ["ada", "deploy"])
            let deploy = try Self.request(issuer, key: key, accessToken: tokens.accessToken, principals: ["deploy"])
            let (status, issued, _, _) = try await Self.post(issuer, deploy, token: tokens.accessToken)
            #expect(status == 201 && issued?.principals == ["deploy"])
            try await Self.expectRefused(issuer, try Self.request(issuer, key: key, accessToken: tokens.accessToken, principals: ["root"]), token: tokens.accessToken, status: 403, code: "principal_not_granted")
            let bad = try await ProviderTests.admin(issuer).call(AdminAPI.setSSHPrincipals, identity, body: .init(principals: ["a,b"]))
            #expect(bad.status == 400)
        }
    }

    @Test("a lifetime past the cap or under a minute is invalid_request; one within it is kept")
    func lifetimes() async throws {
        try await Self.withCA(.sqlite, { $0.sshCertificateLifetime = 3600 }) { issuer, authenticator in
            let (_, tokens) = try await Self.tokens(issuer, authenticator)
            let key = try SigningKey.generate(.ed25519)
            for lifetime in [3601, 86_400 * 2, 30, -5] {
                try await Self.expectRefused(
                    issuer, try Self.request(issuer, key: key, accessToken: tokens.accessToken, lifetime: lifetime), token: tokens.accessToken,
                    status: 400, code: "invalid_request", "\(lifetime) s"
                )
            }
            let (status, issued, _, _) = try await Self.post(issuer, try Self.request(issuer, key: key, accessToken: tokens.accessToken, lifetime: 600), token: tokens.accessToken)
            let certificate = try SSHCertificate(openSSHLine: try #require(issued).certificate)
            #expect(status == 201 && certificate.validBefore - certificate.validAfter == 660)
        }
    }

    @Test("a token without the ssh scope is 403 insufficient_scope; no token, or a revoked credential's, is 401")
    func tokensRefused() async throws {
        try await Self.withCA { issuer, authenticator in
            let (identity, plain) = try await Self.tokens(issuer, authenticator, scopes: ["openid"])
            let key = try SigningKey.generate(.ed25519)
            let (status, _, error, challenge) = try await Self.post(issuer, try Self.request(issuer, key: key, accessToken: plain.accessToken), token: plain.accessToken)
            #expect(status == 403 && error == "insufficient_scope" && challenge?.contains("insufficient_scope") == true)
            let none = try await HTTPExchange.send(HTTPMethod.post, issuer.appendingPathComponent(ProtocolPath.sshCertificates), body: Data("{}".utf8))
            #expect(none.status == 401)

            let ssh = try await ProviderTests.signIn(issuer, authenticator, client: try ProviderTests.client(issuer), scopes: ["openid", "ssh"])
            let credential = try #require(try await ProviderTests.admin(issuer).call(AdminAPI.credentials, identity).answer?.credentials.first?.id)
            #expect(try await ProviderTests.admin(issuer).call(AdminAPI.revokeCredential, credential).status == 200)
            try await Self.expectRefused(issuer, try Self.request(issuer, key: key, accessToken: ssh.accessToken), token: ssh.accessToken, status: 401, code: "invalid_token")
            #expect(try await Self.issuedCount(issuer) == 0)
        }
    }

    @Test("a key certified for one identity is invalid_ssh_key for another (409)")
    func keyOfAnotherIdentity() async throws {
        try await Self.withCA { issuer, authenticator in
            let (_, ada) = try await Self.tokens(issuer, authenticator)
            let directory = try TemporaryDirectory()
            let other = try ProviderTests.newAuthenticator(directory.url)
            let (_, grace) = try await Self.tokens(issuer, other, username: "grace")
            let key = try SigningKey.generate(.ed25519)
            #expect(try await Self.post(issuer, try Self.request(issuer, key: key, accessToken: ada.accessToken), token: ada.accessToken).0 == 201)
            try await Self.expectRefused(issuer, try Self.request(issuer, key: key, accessToken: grace.accessToken), token: grace.accessToken, status: 409, code: "invalid_ssh_key")
            #expect(try await Self.issuedCount(issuer) == 1)
        }
    }

    @Test("a flood of KRL, CA key and certificate requests from one address is refused past the limit (429), and the CA is 404 when the provider runs none")
    func floods() async throws {
        try await Self.withCA(.sqlite, { $0.rateLimitPerMinute = 5 }) { issuer, _ in
            for path in [ProtocolPath.sshRevocations, ProtocolPath.sshAuthority] {
                var statuses: [Int] = []
                for _ in 0..<8 { statuses.append(try await Self.get(issuer, path).status) }
                #expect(statuses == [200, 200, 200, 200, 200, 429, 429, 429], "\(path): \(statuses)")
            }
        }
        try await ProviderTests.withProvider(.sqlite, { _ in }) { issuer, _ in
            let authority = try await Self.get(issuer, ProtocolPath.sshAuthority)
            let revocations = try await Self.get(issuer, ProtocolPath.sshRevocations)
            #expect(authority.status == 404 && revocations.status == 404)
        }
    }

    @Test("host certificate requests with no host, 33 hosts, a host with a comma, a lifetime past 365 days or an RSA key are refused (400); 65 principals for an identity too")
    func hostCertificateBounds() async throws {
        try await Self.withCA { issuer, authenticator in
            let key = try SSHPublicKey(try SigningKey.generate(.ed25519).publicKey).openSSHLine()
            let admin = ProviderTests.admin(issuer)
            let rsa = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ== host"
            for (hosts, lifetime, line) in [
                ([String](), nil as Int?, key), ((0..<33).map { "h\($0).example.com" }, nil, key), (["a.example.com,b.example.com"], nil, key),
                (["a.example.com"], 366 * 86_400, key), (["a.example.com"], nil, rsa),
            ] {
                let reply = try await admin.call(AdminAPI.createSSHHostCertificate, body: .init(publicKey: line, hosts: hosts, lifetime: lifetime))
                #expect(reply.status == 400, "\(hosts.count) hosts, \(lifetime ?? 0) s: \(reply.status)")
            }
            let (identity, _) = try await ProviderTests.bind(issuer, authenticator)
            let many = try await admin.call(AdminAPI.setSSHPrincipals, identity, body: .init(principals: (0..<65).map { "p\($0)" }))
            #expect(many.status == 400)
            #expect(try await Self.issuedCount(issuer) == 0)
        }
    }

    @Test("host certificates name hosts, not patterns: *, *.example.com, web-? and !x are refused (400); plain names and addresses are signed")
    func hostPatterns() async throws {
        try await Self.withCA { issuer, _ in
            let key = try SSHPublicKey(try SigningKey.generate(.ed25519).publicKey).openSSHLine()
            let admin = ProviderTests.admin(issuer)
            for host in ["*", "*.example.com", "web-?", "!x", "web-1.example.com,*"] {
                let reply = try await admin.call(AdminAPI.createSSHHostCertificate, body: .init(publicKey: key, hosts: ["web-1.example.com", host]))
                #expect(reply.status == 400, "\(host): \(reply.status)")
            }
            #expect(try await Self.issuedCount(issuer) == 0)
            let signed = try await admin.call(AdminAPI.createSSHHostCertificate, body: .init(publicKey: key, hosts: ["web-1.example.com", "192.0.2.7", "web-1"]))
            #expect(signed.status == 201)
        }
    }

    @Test("an Ed25519 key of small order (the identity point, with a proof anyone can forge) or in a non-canonical encoding is invalid_ssh_key, and nothing is issued")
    func smallOrderKey() async throws {
        try await Self.withCA { issuer, authenticator in
            let (_, tokens) = try await Self.tokens(issuer, authenticator)
            let identityPoint = [1] + [UInt8](repeating: 0, count: 31)
            let nonCanonical = [0xEE] + [UInt8](repeating: 0xFF, count: 30) + [0x7F]
            for raw in [identityPoint, nonCanonical] {
                var blob = Data()
                for part in [Data("ssh-ed25519".utf8), Data(raw)] {
                    blob.append(contentsOf: withUnsafeBytes(of: UInt32(part.count).bigEndian, Array.init))
                    blob.append(part)
                }
                let line = "ssh-ed25519 " + blob.base64EncodedString()
                let request = try Self.request(issuer, key: try SigningKey.generate(.ed25519), accessToken: tokens.accessToken, publicKeyLine: line)
                try await Self.expectRefused(issuer, request, token: tokens.accessToken, status: 400, code: "invalid_ssh_key", "\(raw.prefix(2))")
            }
            #expect(try await Self.issuedCount(issuer) == 0)
        }
    }
}
