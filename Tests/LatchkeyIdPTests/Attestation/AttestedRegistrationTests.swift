import Foundation
@testable import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// Registrations that claim `tpm` attestation without the TPM behind it, sent through a
/// bind link of a provider that demands attestation (`--require-attestation tpm`) and
/// runs the attestation CA, over real HTTP with the swtpm `.ci/run` manufactures (TPM A)
/// and, where a second TPM is needed, a fresh swtpm of the test's own (TPM B). Each is
/// refused by name; the honest registration beside them is accepted.
@Suite(
    "Provider: registrations that claim tpm attestation falsely", .serialized,
    .requires(if: ManufacturedTPM.configured && SoftwareTPM.available, "skipped: no manufactured swtpm (TPM2OPENSSL_TCTI, LATCHKEY_TEST_EK_ROOTS) or no swtpm (.ci/run sets up both)")
)
struct AttestedRegistrationTests {
    typealias CA = AttestationAuthorityTests

    /// A bind job's creation options and where to submit.
    struct Job {
        let challenge: Data
        let submit: URL
    }

    static func job(_ harness: ProviderHarness, _ username: String) async throws -> Job {
        let (_, bindURL) = try await harness.createIdentity(username)
        let response = try await HTTP1Transport().send(TransportRequest(method: HTTPMethod.get, url: bindURL))
        let job = try JSONValue(json: response.body)
        let options = try PublicKeyCredentialCreationOptionsJSON(json: job.json())
        #expect(options.attestation == "direct", "a provider that demands attestation asks for it")
        return Job(challenge: options.challenge.data, submit: try #require(URL(string: job["submit"]?.stringValue ?? "")))
    }

    /// authenticatorData and clientDataJSON of a registration of `key` for `job`.
    static func ceremony(_ harness: ProviderHarness, _ job: Job, key: VerifyingKey) throws -> (AuthenticatorData, Data, Data) {
        let credentialID = try SecureRandom.bytes(count: 32)
        let authenticatorData = try AuthenticatorData(
            rpIDHash: try DigestAlgorithm.sha256.hash(Data(harness.host.utf8)), flags: [.userPresent, .userVerified], signCount: 0,
            attestedCredentialData: .init(aaguid: TPMAttestationSigner.aaguid, credentialID: credentialID, credentialPublicKey: try COSEKey(key))
        )
        let clientDataJSON = CollectedClientData(type: CollectedClientData.createType, challenge: job.challenge, origin: "http://\(harness.host):\(harness.port)").serialized()
        return (authenticatorData, clientDataJSON, credentialID)
    }

    static func submit(_ job: Job, _ authenticatorData: AuthenticatorData, _ clientDataJSON: Data, _ credentialID: Data, certification: TPMCertification, aik: X509Certificate) async throws -> CA.Reply {
        let attestation = AttestationObject.tpm(authenticatorData, certification: certification, certificates: [aik])
        let registration = RegistrationResponseJSON(credentialID: credentialID, clientDataJSON: clientDataJSON, attestationObject: attestation)
        return try await HTTPExchange.send(HTTPMethod.post, job.submit, headers: ["Content-Type": ProtocolPath.jsonMediaType], body: try registration.json())
    }

    static func withDemandingCA(_ body: @escaping @Sendable (ProviderHarness) async throws -> Void) async throws {
        let roots = try ManufacturedTPM.endorsementRoots()
        try await ProviderHarness.run(nil, { configuration in
            configuration.attestationAuthority = true
            configuration.endorsementRoots = roots
            configuration.requiredAttestation = .tpm
        }, body)
    }

    @Test("a software key claiming tpm: the TPM certified another key, or pubArea was rewritten to the software key; the honest TPM key is accepted")
    func softwareKeyClaimingTPM() async throws {
        try await Self.withDemandingCA { harness in
            let tpm = try TPM.system()
            let attestationKey = try await Blocking.runThrowing { try tpm.createAttestationKey() }
            let (aik, _, _) = try await CA.certificate(harness.issuer, tpm, attestationKey)
            let tpmKey = try await Blocking.runThrowing { try TPMSigningKey.generate(in: tpm) }
            let software = try SigningKey.generate(.es256)

            // The software key in authenticatorData; the TPM certified its own key.
            let job = try await Self.job(harness, "ada")
            let (data, clientData, id) = try Self.ceremony(harness, job, key: software.publicKey)
            let qualifying = try AttestationObject.tpmQualifyingData(data, clientDataHash: try DigestAlgorithm.sha256.hash(clientData))
            let certification = try await Blocking.runThrowing { try tpm.certify(tpmKey, with: attestationKey, qualifyingData: qualifying) }
            let other = try await Self.submit(job, data, clientData, id, certification: certification, aik: aik)
            #expect(other.status == 400 && other.errorCode == "invalid_registration", "\(String(decoding: other.body, as: UTF8.self))")
            #expect(String(decoding: other.body, as: UTF8.self).contains("pubArea holds another key"))

            // pubArea rewritten to hold the software key's point: no longer what the TPM named.
            var area = certification.publicArea
            let point = software.publicKey.spkiDER.suffix(64)
            area.replaceSubrange(area.endIndex - 66..<area.endIndex - 34, with: point.prefix(32))
            area.replaceSubrange(area.endIndex - 32..<area.endIndex, with: point.suffix(32))
            let rewritten = TPMCertification(certInfo: certification.certInfo, signature: certification.signature, publicArea: area)
            let forged = try await Self.submit(job, data, clientData, id, certification: rewritten, aik: aik)
            #expect(forged.status == 400 && forged.errorCode == "invalid_registration", "\(String(decoding: forged.body, as: UTF8.self))")
            #expect(String(decoding: forged.body, as: UTF8.self).contains("certified name"))

            // The same job, honestly: the TPM key, certified by the AK.
            let (honestData, honestClientData, honestID) = try Self.ceremony(harness, job, key: tpmKey.publicKey)
            let honestQualifying = try AttestationObject.tpmQualifyingData(honestData, clientDataHash: try DigestAlgorithm.sha256.hash(honestClientData))
            let honest = try await Self.submit(
                job, honestData, honestClientData, honestID, certification: try await Blocking.runThrowing { try tpm.certify(tpmKey, with: attestationKey, qualifyingData: honestQualifying) }, aik: aik
            )
            #expect(honest.status == 201, "\(String(decoding: honest.body, as: UTF8.self))")
        }
    }

    @Test("a TPM that is not the one the AK came from: TPM B cannot recover a secret made for TPM A's EK, A cannot load B's AK, and a statement B signs under A's AIK certificate is refused")
    func anotherTPM() async throws {
        let other = try await SoftwareTPM()
        let tpmB = TPM(attestationOnlyAt: other.tcti)
        try await Self.withDemandingCA { harness in
            let tpmA = try TPM.system()
            // TPM A's genuine EK certificate, with an AK made in TPM B.
            let akB = try await Blocking.runThrowing { try tpmB.createAttestationKey() }
            let started = try await CA.post(harness.issuer, ProtocolPath.attestationActivations, try CA.activationRequest(tpmA, akB))
            #expect(started.status == 201, "the CA cannot tell yet: \(String(decoding: started.body, as: UTF8.self))")
            let activation = try JSONDecoder().decode(AttestationExchange.Activation.self, from: started.body)
            let challenge = TPMCredentialProtection.Challenge(
                credentialBlob: try Base64URL.decode(activation.credentialBlob), encryptedSecret: try Base64URL.decode(activation.encryptedSecret)
            )
            let onB = await Blocking.run { Result { try tpmB.activateCredential(akB, challenge: challenge) } }
            #expect(throws: CryptoError.self, "TPM B's EK cannot open a secret made for TPM A's") { try onB.get() }
            let onA = await Blocking.run { Result { try tpmA.activateCredential(akB, challenge: challenge) } }
            let loadError = #expect(throws: CryptoError.self, "TPM A cannot load TPM B's AK") { try onA.get() }
            #expect(loadError?.code == .tpmKeyUnusable, "\(String(describing: loadError))")
            let guessed = try await CA.post(harness.issuer, ProtocolPath.attestationCertificates, AttestationExchange.CertificateRequest(
                activation: activation.activation, credential: Base64URL.encode(try SecureRandom.bytes(count: 32))
            ))
            #expect(guessed.status == 400 && guessed.errorCode == "invalid_activation")

            // TPM A's AK holds a genuine AIK certificate; TPM B certifies a key of its own
            // under it.
            let akA = try await Blocking.runThrowing { try tpmA.createAttestationKey() }
            let (aik, _, _) = try await CA.certificate(harness.issuer, tpmA, akA)
            let keyB = try await Blocking.runThrowing { try tpmB.createAttestationKey() }
            let areaB = try TPMTPublic(keyB.publicArea)
            let credentialB = try TPMSigningKey(wrappedKey: keyB.wrappedKey, publicKey: try VerifyingKey(p256X: areaB.x, y: areaB.y), in: tpmB)
            let job = try await Self.job(harness, "ada")
            let (data, clientData, id) = try Self.ceremony(harness, job, key: credentialB.publicKey)
            let qualifying = try AttestationObject.tpmQualifyingData(data, clientDataHash: try DigestAlgorithm.sha256.hash(clientData))
            let certification = try await Blocking.runThrowing { try tpmB.certify(credentialB, with: akB, qualifyingData: qualifying) }
            let refused = try await Self.submit(job, data, clientData, id, certification: certification, aik: aik)
            #expect(refused.status == 400 && refused.errorCode == "invalid_registration", "\(String(decoding: refused.body, as: UTF8.self))")
            #expect(String(decoding: refused.body, as: UTF8.self).contains("sig is not the AIK"))
        }
        withExtendedLifetime(other) {}
    }
}
