import Foundation
import LatchkeyOAuth
import Latchkey
import LatchkeyIdP
import LatchkeyTestSupport
import LatchkeyProtocol
import Testing

/// Real e-mail (docs/ARCHITECTURE.md, "Operations: mail"): the provider hands its codes to
/// a real SMTP server on loopback (aiosmtpd), directly or through a sendmail, and the
/// tests read the codes from the delivered messages.
@Suite("Mail through a real SMTP server", .requires("python3 with aiosmtpd not found: skipped") { await SMTPSink.available })
struct MailTests {
    static let sender = "latchkey@example.com"

    /// A step handler answering verify-code with the code in the newest message to `address`.
    static func mailReader(_ sink: SMTPSink, address: String) -> Embedded.StepHandler {
        let seen = CallCounter<Int>()
        return { step in
            guard step.name == .verifyCode else { throw CancellationError() }
            let message = try await sink.message(to: address, index: seen.values.count)
            seen.record(1)
            let code = try #require(message.body.firstMatch(of: #/Enter (\d{8}) /#)?.1)
            return .code(String(code))
        }
    }

    @Test("sign-up and recovery end to end through SMTP: the codes come from the delivered mail, which the store then forgets")
    func signUpAndRecovery() async throws {
        let sink = try await SMTPSink()
        let lost = try TemporaryVault()
        defer { lost.cleanUp() }
        try await ProviderHarness.withVault({
            $0.selfRegistration = true
            $0.mail = .init(transport: .smtp(url: "smtp://127.0.0.1:\(sink.port)", password: nil, trustedCertificatesFile: nil), from: Self.sender)
        }) { provider, vault in
            let newcomer = try lost.embedded(allowing: [provider.host], stepHandler: Self.mailReader(sink, address: "grace@example.com"))
            let credential = try await newcomer.signUp(issuer: provider.issuer, username: "grace", profile: [.givenName: "Grace", .email: "grace@example.com"])
            #expect(credential.user.name == "grace")

            let recovering = try vault.embedded(allowing: [provider.host], stepHandler: Self.mailReader(sink, address: "grace@example.com"))
            #expect(try await recovering.recover(issuer: provider.issuer, username: "grace").user.name == "grace")

            let messages = sink.messages()
            #expect(messages.count == 2 && messages.allSatisfy { $0.from == Self.sender && $0.tls == false })
            #expect(messages.last?.subject == "Your Latchkey recovery code")
            #expect(messages.last?.body.contains(/[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}-[0-9A-Z]{5}/) == true, "the long form is in the mail")
            // Once sent, the outbox keeps neither the body nor the code.
            let stored = try await provider.outbox()
            #expect(stored.count == 2 && stored.allSatisfy { $0.body.isEmpty && $0.code == nil }, "\(stored)")
        }
    }

    @Test("STARTTLS with a verified certificate, then AUTH: the password travels only inside TLS")
    func startTLSAndAuth() async throws {
        let directory = try TemporaryDirectory()
        let (ca, certificate, key) = try await TestCertificates.make(in: directory.url)
        let sink = try await SMTPSink(starttls: (certificate, key), auth: ("latchkey", "mail-password"))
        try await ProviderHarness.withVault({
            $0.mail = .init(transport: .smtp(url: "smtp://latchkey@localhost:\(sink.port)", password: "mail-password", trustedCertificatesFile: ca.path), from: Self.sender)
        }) { provider, vault in
            _ = try await provider.createIdentity("ada")
            let embedded = try vault.embedded(allowing: [provider.host], stepHandler: Self.mailReader(sink, address: "ada@example.com"))
            #expect(try await embedded.recover(issuer: provider.issuer, username: "ada").user.name == "ada")
            let message = try #require(sink.messages().first)
            #expect(message.tls && message.authenticated == true)
        }
    }

    @Test("a server whose certificate does not verify gets no mail; while mail keeps failing, starts are still answered and codes wait in the outbox")
    func unverifiedServer() async throws {
        let directory = try TemporaryDirectory()
        let (_, certificate, key) = try await TestCertificates.make(in: directory.url)
        let sink = try await SMTPSink(starttls: (certificate, key), auth: ("latchkey", "mail-password"))
        try await ProviderHarness.withVault({
            // The system's trust store does not know the test CA.
            $0.mail = .init(transport: .smtp(url: "smtp://latchkey@localhost:\(sink.port)", password: "mail-password", trustedCertificatesFile: nil), from: Self.sender)
        }) { provider, _ in
            for name in ["ada", "bob", "cy"] {
                _ = try await provider.createIdentity(name)
                #expect(try await provider.post("v1/recovery", ["username": .string(name)]).0 == 200)
            }
            // Three deliveries fail (and are retried): the transport is failing, which
            // the operator sees in /metrics; starts are answered as ever, for a real name
            // and a made-up one alike, and their codes wait in the outbox.
            var failing = 0.0
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
                let (_, text, _) = try await OperationsTests.get(provider.issuer.appendingPathComponent("metrics"), token: ProviderHarness.adminToken)
                failing = try OperationsTests.parsePrometheus(text)["latchkey_mail_transport_failing"] ?? 0
                if failing == 1 { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(failing == 1, "three failed deliveries turn the transport to failing")
            #expect(try await provider.post("v1/recovery", ["username": "ada"]).0 == 200)
            #expect(try await provider.post("v1/recovery", ["username": "nobody-at-all"]).0 == 200)
            #expect(sink.messages().isEmpty, "nothing reached a server that could not be verified")
        }
    }

    @Test("--mail sendmail: messages go to sendmail -t -i on its standard input")
    func sendmail() async throws {
        let sink = try await SMTPSink()
        let directory = try TemporaryDirectory()
        // A minimal MTA: takes the message as sendmail does and relays it by SMTP.
        let program = directory.url.appendingPathComponent("sendmail")
        try """
            #!/usr/bin/env python3
            import email, smtplib, sys
            assert sys.argv[1:3] == ["-t", "-i"] and sys.argv[3] == "-f", sys.argv
            data = sys.stdin.buffer.read()
            message = email.message_from_bytes(data)
            with smtplib.SMTP("127.0.0.1", \(sink.port)) as server:
                server.sendmail(sys.argv[4], [message["To"]], data)
            """.write(to: program, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: program.path)
        try await ProviderHarness.withVault({
            $0.mail = .init(transport: .sendmail(path: program.path), from: Self.sender)
        }) { provider, vault in
            _ = try await provider.createIdentity("ada")
            let embedded = try vault.embedded(allowing: [provider.host], stepHandler: Self.mailReader(sink, address: "ada@example.com"))
            #expect(try await embedded.recover(issuer: provider.issuer, username: "ada").user.name == "ada")
            #expect(sink.messages().first?.from == Self.sender)
        }
    }
}
