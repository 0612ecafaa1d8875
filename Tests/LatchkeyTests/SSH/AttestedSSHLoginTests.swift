import Foundation
@testable import Latchkey
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// SSH keys proved to live in the TPM (`serve --ssh-require-attestation tpm`;
/// docs/PROTOCOL.md section 12, "Attested keys"), on the swtpm `.ci/run` manufactures: the
/// client certifies its TPM SSH key with its attestation key over each request, the
/// demanding provider checks the statement against its attestation CA's root, and `sshd`
/// accepts the certificate. Requests without attestation, with a statement made for
/// another request or for another key, are refused by name and nothing is issued.
@Suite(
    "Passwordless SSH: keys attested as living in the TPM", .serialized,
    .requires(if: ManufacturedTPM.configured, "skipped: TPM2OPENSSL_TCTI or LATCHKEY_TEST_EK_ROOTS is not set (.ci/run sets both)")
)
struct AttestedSSHLoginTests {
    /// The attestation CA's provider (``AttestedBindTests/demandingProvider(policy:configure:_:)``),
    /// as an SSH CA that certifies attested keys only, registrations left to any attestation.
    static func demandingProvider(_ body: @escaping @Sendable (ProviderHarness, TemporaryVault) async throws -> Void) async throws {
        try await AttestedBindTests.demandingProvider(policy: nil, configure: { configuration in
            configuration.sshAuthority = true
            configuration.sshRequiredAttestation = .tpm
        }, body)
    }

    /// The certificate requests `transport` sent, in order.
    static func certificateRequests(_ transport: RecordingTransport) -> [TransportRequest] {
        transport.requests.filter { $0.method == HTTPMethod.post && $0.url.path.hasSuffix(ProtocolPath.sshCertificates) }
    }

    /// `request` sent again with its body changed by `edit`: its headers (the access token
    /// and DPoP proof) as they were.
    static func resend(_ request: TransportRequest, editing edit: (inout SSHCertificateExchange.Request) -> Void) async throws -> (Int, ErrorResponse?) {
        var body = try JSONDecoder().decode(SSHCertificateExchange.Request.self, from: try #require(request.body))
        edit(&body)
        var changed = request
        changed.body = try JSONEncoder().encode(body)
        let response = try await HTTP1Transport().send(changed)
        return (response.status, try? JSONDecoder().decode(ErrorResponse.self, from: response.body))
    }

    @Test("ssh login --attest on a TPM: the provider that demands attestation certifies the key, names it attested in the key id and the audit event, and sshd accepts the certificate through the agent")
    func attestedLogin() async throws {
        try await Self.demandingProvider { provider, vault in
            let transport = RecordingTransport()
            let embedded = try vault.embedded(allowing: [provider.host], transport: transport, configure: {
                $0.keyProtection = .tpm
                $0.attestation = .tpm()
            })
            let (identity, bindURL) = try await provider.createIdentity("ada")
            _ = try await embedded.registerCredential(from: bindURL)
            let user = SSHLoginTests.currentUser
            #expect(try await provider.admin.call(AdminAPI.setSSHPrincipals, identity, body: .init(principals: [user])).status == 200)

            let login = try await embedded.sshLogin(issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback, principals: [user])
            #expect(login.keyProtection == .tpm && login.keyID.hasSuffix(" attested=tpm"), "\(login.keyID)")
            let sent = try #require(Self.certificateRequests(transport).last)
            let body = try JSONDecoder().decode(SSHCertificateExchange.Request.self, from: try #require(sent.body))
            #expect(body.attestation?.format == "tpm" && body.attestation?.x5c.count == 1)
            let issued = try await provider.auditEvents().filter { $0.type == .sshCertificateIssued }
            #expect(issued.map(\.details?.attestation) == ["tpm"])

            let scratch = try TemporaryDirectory()
            let (agent, sshSocket) = try await SSHLoginTests.agent(vault, in: scratch)
            defer { agent.stop() }
            let caLine = String(decoding: try await HTTPExchange.send(HTTPMethod.get, provider.issuer.appendingPathComponent(ProtocolPath.sshAuthority)).body, as: UTF8.self)
            let server = try await SSHLoginTests.startServer(caLine: caLine)
            defer { server.stop() }
            let shell = try await SSHLoginTests.ssh(server, user: user, agentSocket: sshSocket)
            #expect(shell.status == 0 && shell.stdout.contains("logged-in-by-certificate"), "\(shell.stderr)")
        }
    }

    @Test("the demanding provider refuses a request without attestation (attestation_required), a TPM statement made for another request or lifted onto another key (invalid_ssh_proof), and a software key; nothing is issued")
    func hostileAttestations() async throws {
        try await Self.demandingProvider { provider, vault in
            let transport = RecordingTransport()
            let attested = try vault.embedded(allowing: [provider.host], transport: transport, configure: {
                $0.keyProtection = .tpm
                $0.attestation = .tpm()
            })
            let (identity, bindURL) = try await provider.createIdentity("ada")
            _ = try await attested.registerCredential(from: bindURL)
            _ = try await attested.sshLogin(issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback)
            _ = try await attested.sshLogin(issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback)
            let requests = Self.certificateRequests(transport)
            try #require(requests.count == 2)
            let first = try JSONDecoder().decode(SSHCertificateExchange.Request.self, from: try #require(requests[0].body))
            let firstStatement = try #require(first.attestation)

            // The second request with the first's statement: its extraData hashes another
            // proof, so it vouches for another request.
            let (replayed, replayedError) = try await Self.resend(requests[1]) { $0.attestation = firstStatement }
            #expect(replayed == 400 && replayedError?.error == .invalidSSHProof, "\(String(describing: replayedError))")
            #expect(replayedError?.errorDescription?.contains("extraData") == true, "\(String(describing: replayedError))")
            // No statement at all.
            let (bare, bareError) = try await Self.resend(requests[1]) { $0.attestation = nil }
            #expect(bare == 400 && bareError?.error == .attestationRequired, "\(String(describing: bareError))")
            // A statement whose certified name is changed: pubArea no longer the key's.
            let (forged, forgedError) = try await Self.resend(requests[1]) { request in
                var area = (try? Base64URL.decode(firstStatement.pubArea)) ?? Data()
                if !area.isEmpty { area[area.count - 1] ^= 0x01 }
                request.attestation?.pubArea = Base64URL.encode(area)
            }
            #expect(forged == 400 && forgedError?.error == .invalidSSHProof, "\(String(describing: forgedError))")
            // Oversized and malformed parts.
            let (oversized, oversizedError) = try await Self.resend(requests[1]) { $0.attestation?.x5c = Array(repeating: firstStatement.x5c[0], count: 5) }
            #expect(oversized == 400 && oversizedError?.error == .invalidSSHProof, "\(String(describing: oversizedError))")
            let (garbage, garbageError) = try await Self.resend(requests[1]) { $0.attestation?.x5c = ["AAAA"] }
            #expect(garbage == 400 && garbageError?.error == .invalidSSHProof, "\(String(describing: garbageError))")

            // A software key with the TPM key's statement: a TPM holds no Ed25519 key.
            let softwareTransport = RecordingTransport()
            let otherVault = try TemporaryVault()
            let software = try otherVault.embedded(allowing: [provider.host], transport: softwareTransport, configure: { $0.keyProtection = .software })
            let (_, secondBind) = try await provider.createIdentity("grace")
            _ = try await software.registerCredential(from: secondBind)
            do {
                _ = try await software.sshLogin(issuer: provider.issuer, clientID: "latchkey-cli", redirectURI: ProviderHarness.callback)
                Issue.record("a software key was certified by a provider that demands TPM attestation")
            } catch let error as LatchkeyError {
                #expect(error.providerError?.error == .attestationRequired, "\(error)")
            }
            let softwareRequest = try #require(Self.certificateRequests(softwareTransport).last)
            let (lifted, liftedError) = try await Self.resend(softwareRequest) { $0.attestation = firstStatement }
            #expect(lifted == 400 && liftedError?.error == .invalidSSHProof, "\(String(describing: liftedError))")

            let issued = try await provider.auditEvents().filter { $0.type == .sshCertificateIssued }
            #expect(issued.count == 2 && issued.allSatisfy { $0.subject == identity }, "only the two attested requests")
        }
    }
}
