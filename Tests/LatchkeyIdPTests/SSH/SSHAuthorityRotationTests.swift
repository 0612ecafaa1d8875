import Foundation
import LatchkeyCrypto
@testable import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// Rotating the SSH CA (docs/PROTOCOL.md section 12, "Rotating the CA"): a next key is
/// published beside the current one before it signs; once activated it signs and the old
/// one stays published, its certificates on the KRL in a section of their own, until they
/// have expired; every step through `latchkey admin rotate-ssh-ca` and the audit log.
@Suite("Provider: SSH CA rotation")
struct SSHAuthorityRotationTests {
    static func caLines(_ issuer: URL) async throws -> [SSHPublicKey] {
        let answer = try await SSHAuthorityTests.get(issuer, ProtocolPath.sshAuthority)
        try #require(answer.status == 200)
        return try String(decoding: answer.body, as: UTF8.self).split(separator: "\n").map { try SSHPublicKey(openSSHLine: String($0)) }
    }

    static func certificate(_ issuer: URL, _ tokens: TokenSet, _ directory: TemporaryDirectory, _ name: String) async throws -> (SSHCertificate, URL) {
        let request = try SSHAuthorityTests.request(issuer, key: try SigningKey.generate(.ed25519), accessToken: tokens.accessToken)
        let (status, issued, error, _) = try await SSHAuthorityTests.post(issuer, request, token: tokens.accessToken)
        try #require(status == 201, "\(error ?? "-")")
        let line = try #require(issued).certificate
        let file = directory.url.appendingPathComponent(name + "-cert.pub")
        try Data((line + "\n").utf8).write(to: file)
        return (try SSHCertificate(openSSHLine: line), file)
    }

    static func rotate(_ issuer: URL, activate: Bool = false) async throws -> (Int32, AdminAPI.SSHAuthorityKeys?, String) {
        let run = try await LatchkeyCommand.run(
            ["admin", "rotate-ssh-ca", "--idp", issuer.absoluteString, "--json"] + (activate ? ["--activate"] : []),
            environment: ["LATCHKEY_ADMIN_TOKEN": ProviderHarness.adminToken]
        )
        return (run.status, try? JSONDecoder().decode(AdminAPI.SSHAuthorityKeys.self, from: Data(run.stdout.utf8)), run.stderr)
    }

    @Test("stage, publish both, activate: certificates of both keys verify against the published lines, the KRL revokes each under its own key, the old key leaves after 24 hours", arguments: TestStore.available)
    func rotation(engine: TestStore) async throws {
        let clock = TestClock()
        try await SSHAuthorityTests.withCA(engine, { $0.clock = clock.provider }) { issuer, authenticator in
            let directory = try TemporaryDirectory()
            let (identity, tokens) = try await SSHAuthorityTests.tokens(issuer, authenticator)
            let first = try await Self.caLines(issuer)
            try #require(first.count == 1)
            let old = first[0]
            let (a, aFile) = try await Self.certificate(issuer, tokens, directory, "a")
            #expect(a.signatureKey == old)

            let (activateEarly, _, early) = try await Self.rotate(issuer, activate: true)
            #expect(activateEarly != 0 && early.contains("no next SSH CA key"), "\(early)")

            let (staged, stagedKeys, stageError) = try await Self.rotate(issuer)
            try #require(staged == 0, "\(stageError)")
            #expect(stagedKeys?.keys.map(\.state) == ["current", "next"] && stagedKeys?.keys.allSatisfy(\.published) == true)
            let both = try await Self.caLines(issuer)
            #expect(both.count == 2 && both[0] == old, "the signing key first, the next one beside it")
            let new = try #require(both.last)
            #expect(new != old && new.fingerprint == stagedKeys?.keys.last?.fingerprint)
            let (again, againKeys, _) = try await Self.rotate(issuer)
            #expect(again == 0 && againKeys?.keys.count == 2 && againKeys?.keys.last?.fingerprint == new.fingerprint, "staging twice keeps the waiting key")
            let (b, bFile) = try await Self.certificate(issuer, tokens, directory, "b")
            #expect(b.signatureKey == old, "the next key signs nothing before it is activated")

            let (activated, activatedKeys, activateError) = try await Self.rotate(issuer, activate: true)
            try #require(activated == 0, "\(activateError)")
            #expect(activatedKeys?.keys.map(\.state) == ["current", "previous"] && activatedKeys?.keys.first?.fingerprint == new.fingerprint)
            #expect(try await Self.caLines(issuer) == [new, old], "the new key first, the old one while its certificates last")
            let (c, cFile) = try await Self.certificate(issuer, tokens, directory, "c")
            #expect(c.signatureKey == new && c.isSignatureValid)

            // The KRL: nothing yet; after the credential is revoked, each certificate under its own CA key.
            func revoked(_ file: URL) async throws -> Bool {
                let list = try await SSHAuthorityTests.get(issuer, ProtocolPath.sshRevocations)
                let krl = directory.url.appendingPathComponent("krl")
                try list.body.write(to: krl)
                return try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/ssh-keygen"), ["-Q", "-f", krl.path, file.path]).status == 1
            }
            for file in [aFile, bFile, cFile] { #expect(try await !revoked(file), "\(file.lastPathComponent)") }
            let listed = try #require(try await ProviderTests.admin(issuer).call(AdminAPI.credentials, identity).answer)
            #expect(try await ProviderTests.admin(issuer).call(AdminAPI.revokeCredential, try #require(listed.credentials.first?.id)).status == 200)
            for file in [aFile, bFile, cFile] { #expect(try await revoked(file), "\(file.lastPathComponent) under its own CA key") }

            let events = try await AuditLogTests.events(issuer)
            #expect(events.filter { $0.type == .sshAuthorityStaged }.map(\.details?.fingerprint) == [new.fingerprint])
            #expect(events.filter { $0.type == .sshAuthorityActivated }.map(\.details?.fingerprint) == [new.fingerprint])
            #expect(events.filter { [.sshAuthorityStaged, .sshAuthorityActivated].contains($0.type) }.allSatisfy { $0.actor == .admin })

            // Once every certificate the old key could have signed has expired, it is no longer published.
            clock.advance(by: ProviderConfiguration.maximumSSHCertificateLifetime + 60)
            #expect(try await Self.caLines(issuer) == [new])
        }
    }
}
