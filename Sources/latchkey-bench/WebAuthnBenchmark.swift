import Foundation
import LatchkeyCrypto
import LatchkeyWebAuthn

/// WebAuthn ceremonies through the software authenticator (vault-backed, so each
/// registration includes a durable vault write and each assertion a durable counter
/// update) and relying-party verification, next to the bare signature operations they
/// contain, measured in the same run.
struct WebAuthnBenchmark {
    var seconds: Double

    func run() throws -> Report {
        let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("latchkey-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: scratch) }
        let keyFile = scratch.appendingPathComponent("vault.key")
        guard FileManager.default.createFile(atPath: keyFile.path, contents: try SecureRandom.bytes(count: 32), attributes: [.posixPermissions: 0o600]) else {
            throw BenchmarkError("cannot write \(keyFile.path)")
        }
        let authenticator = SoftwareAuthenticator(vault: try KeyVault.open(at: scratch.appendingPathComponent("vault"), key: .keyFile(keyFile)))
        let origin = "https://login.example.com"
        let relyingParty = RelyingParty(id: "login.example.com", origins: [origin])
        let challenge = Data(repeating: 1, count: 32)
        let creation = PublicKeyCredentialCreationOptionsJSON(
            rp: .init(id: "login.example.com", name: "Bench"),
            user: .init(id: Data("u".utf8), name: "u", displayName: "U"),
            challenge: challenge,
            pubKeyCredParams: [.init(alg: -7)]
        )
        let (registration, _) = try authenticator.makeCredential(creation, origin: origin)
        let request = PublicKeyCredentialRequestOptionsJSON(challenge: challenge, rpId: "login.example.com", allowCredentials: [.init(id: registration.rawId.data)])
        var credential = try relyingParty.verifyRegistration(registration, challenge: challenge)
        let (assertion, _) = try authenticator.getAssertion(request, origin: origin)
        credential.signCount = 0

        let registrations = try measureThroughput(seconds: seconds / 2) { _ = try authenticator.makeCredential(creation, origin: origin) }
        // Assertions with a single credential to choose from, in a fresh vault.
        let assertionVault = scratch.appendingPathComponent("assertions")
        let single = SoftwareAuthenticator(vault: try KeyVault.open(at: assertionVault, key: .keyFile(keyFile)))
        let (singleRegistration, _) = try single.makeCredential(creation, origin: origin)
        let singleRequest = PublicKeyCredentialRequestOptionsJSON(challenge: challenge, rpId: "login.example.com", allowCredentials: [.init(id: singleRegistration.rawId.data)])
        let assertions = try measureThroughput(seconds: seconds / 2) { _ = try single.getAssertion(singleRequest, origin: origin) }
        let registrationChecks = try measureThroughput(seconds: seconds / 2) { _ = try relyingParty.verifyRegistration(registration, challenge: challenge) }
        let assertionChecks = try measureThroughput(seconds: seconds / 2) { _ = try relyingParty.verifyAuthentication(assertion, challenge: challenge, credential: credential) }

        let key = try SigningKey.generate(.es256)
        let message = Data(repeating: 2, count: 69)
        let signature = try key.signature(for: message)
        let bareSign = try measureThroughput(seconds: seconds / 2) { _ = try key.signature(for: message) }
        let bareVerify = measureThroughput(seconds: seconds / 2) { _ = key.publicKey.isValidSignature(signature, for: message) }

        var report = Report(title: "WebAuthn (software authenticator over the vault, relying-party verification)")
        report.notes = [
            "registration and assertion include the vault's fsync'd write; verification parses JSON, CBOR and keys",
            "a none-attestation registration verifies no signature, so it runs faster than one verification",
        ]
        report.lines = [
            ReportLine(name: "registration (ES256)", latchkey: registrations, reference: nil, referenceName: "none"),
            ReportLine(name: "assertion (ES256)", latchkey: assertions, reference: bareSign, referenceName: "bare ES256 signature"),
            ReportLine(name: "RP verify registration", latchkey: registrationChecks, reference: bareVerify, referenceName: "bare ES256 verification"),
            ReportLine(name: "RP verify assertion", latchkey: assertionChecks, reference: bareVerify, referenceName: "bare ES256 verification"),
        ]
        return report
    }
}
