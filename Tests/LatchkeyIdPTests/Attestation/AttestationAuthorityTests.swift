import Foundation
import LatchkeyCrypto
@testable import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// The provider's attestation CA over real HTTP (docs/PROTOCOL.md section 10) with the
/// swtpm `.ci/run` manufactures: credential activation against the TPM's real endorsement
/// key, the AIK certificate it buys, and a `tpm` registration that certificate vouches
/// for, checked by the provider's verifier and by py_webauthn and python-fido2; then
/// every way to ask for a certificate without the TPM, by name.
@Suite(
    "Provider: the attestation CA (credential activation, AIK certificates)", .serialized,
    .requires(if: ManufacturedTPM.configured, "skipped: TPM2OPENSSL_TCTI or LATCHKEY_TEST_EK_ROOTS is not set (.ci/run sets both)")
)
struct AttestationAuthorityTests {
    typealias Reply = TransportResponse

    static func post(_ issuer: URL, _ path: String, _ value: some Encodable) async throws -> Reply {
        try await HTTPExchange.json(issuer.appendingPathComponent(path), encoding: value)
    }

    static func withCA(
        engine: TestStore? = nil, roots: [X509Certificate]? = nil, _ body: @escaping @Sendable (ProviderHarness) async throws -> Void
    ) async throws {
        let endorsementRoots = try roots ?? ManufacturedTPM.endorsementRoots()
        try await ProviderHarness.run(engine, { configuration in
            configuration.attestationAuthority = true
            configuration.endorsementRoots = endorsementRoots
        }, body)
    }

    static func activationRequest(_ tpm: TPM, _ attestationKey: TPMAttestationKey, endorsement: X509Certificate? = nil, area: Data? = nil) async throws -> AttestationExchange.ActivationRequest {
        let (description, ek) = try await Blocking.runThrowing { (try tpm.describe(), try endorsement ?? tpm.endorsementCertificate()) }
        return AttestationExchange.ActivationRequest(
            endorsementCertificate: Base64URL.encode(ek.derEncoded),
            attestationKey: Base64URL.encode(area ?? attestationKey.publicArea),
            tpm: .init(manufacturer: description.manufacturerID, model: description.model, version: description.versionID)
        )
    }

    /// The whole round: activation, the TPM recovers the secret, the certificate.
    static func certificate(_ issuer: URL, _ tpm: TPM, _ attestationKey: TPMAttestationKey) async throws -> (X509Certificate, AttestationExchange.Activation, Data) {
        let started = try await post(issuer, ProtocolPath.attestationActivations, try activationRequest(tpm, attestationKey))
        #expect(started.status == 201, "\(String(decoding: started.body, as: UTF8.self))")
        let activation = try JSONDecoder().decode(AttestationExchange.Activation.self, from: started.body)
        let challenge = TPMCredentialProtection.Challenge(
            credentialBlob: try Base64URL.decode(activation.credentialBlob), encryptedSecret: try Base64URL.decode(activation.encryptedSecret)
        )
        let secret = try await Blocking.runThrowing { try tpm.activateCredential(attestationKey, challenge: challenge) }
        let issued = try await post(issuer, ProtocolPath.attestationCertificates, AttestationExchange.CertificateRequest(activation: activation.activation, credential: Base64URL.encode(secret)))
        #expect(issued.status == 201, "\(String(decoding: issued.body, as: UTF8.self))")
        let answer = try JSONDecoder().decode(AttestationExchange.Certificate.self, from: issued.body)
        return (try X509Certificate(derEncoded: try Base64URL.decode(answer.certificate)), activation, secret)
    }

    /// The published root, PEM.
    static func root(_ issuer: URL) async throws -> (pem: String, certificate: X509Certificate) {
        let response = try await HTTP1Transport().send(TransportRequest(method: HTTPMethod.get, url: issuer.appendingPathComponent(ProtocolPath.attestationRoots)))
        #expect(response.status == 200)
        let pem = String(decoding: response.body, as: UTF8.self)
        return (pem, try #require(try X509Certificate.certificates(pem: response.body).first))
    }

    /// A registration of a new TPM key with `tpm` attestation by `attestationKey`.
    static func attestedRegistration(_ tpm: TPM, _ attestationKey: TPMAttestationKey, aik: X509Certificate, challenge: Data) async throws -> RegistrationResponseJSON {
        let key = try await Blocking.runThrowing { try TPMSigningKey.generate(in: tpm) }
        let credentialID = try SecureRandom.bytes(count: 32)
        let authenticatorData = try AuthenticatorData(
            rpIDHash: try DigestAlgorithm.sha256.hash(Data("example.com".utf8)), flags: [.userPresent, .userVerified], signCount: 0,
            attestedCredentialData: .init(aaguid: Data(count: 16), credentialID: credentialID, credentialPublicKey: try COSEKey(key.publicKey))
        )
        let clientDataJSON = CollectedClientData(type: CollectedClientData.createType, challenge: challenge, origin: "https://example.com").serialized()
        let qualifying = try AttestationObject.tpmQualifyingData(authenticatorData, clientDataHash: try DigestAlgorithm.sha256.hash(clientDataJSON))
        let certification = try await Blocking.runThrowing { try tpm.certify(key, with: attestationKey, qualifyingData: qualifying) }
        let attestation = AttestationObject.tpm(authenticatorData, certification: certification, certificates: [aik])
        return RegistrationResponseJSON(credentialID: credentialID, clientDataJSON: clientDataJSON, attestationObject: attestation)
    }

    @Test(
        "a TPM gets an AIK certificate after credential activation (§8.3.1 shape, chained to the published root) and one attestation.certified; a registration it attests verifies",
        arguments: TestStore.available
    )
    func issueAndVerify(engine: TestStore) async throws {
        try await Self.withCA(engine: engine) { harness in
            let tpm = try TPM.system()
            let attestationKey = try await Blocking.runThrowing { try tpm.createAttestationKey() }
            let (aik, _, _) = try await Self.certificate(harness.issuer, tpm, attestationKey)
            let (_, root) = try await Self.root(harness.issuer)
            #expect(aik.chains(to: [root]))
            #expect(aik.version == 3 && aik.subjectIsEmpty && aik.basicConstraints == (true, false))
            #expect(aik.extendedKeyUsages == [X509Certificate.aikCertificateUsage])
            #expect(aik.authorityKeyIdentifier == root.subjectKeyIdentifier && aik.authorityKeyIdentifier != nil)
            let san = try #require(aik.subjectAlternativeName)
            let description = try await Blocking.runThrowing { try tpm.describe() }
            #expect(san.critical && san.directoryNameAttributes.map(\.oid) == [
                X509Certificate.tpmManufacturerAttribute, X509Certificate.tpmModelAttribute, X509Certificate.tpmVersionAttribute,
            ])
            #expect(san.directoryNameAttributes.first?.value == description.manufacturerID)
            let akArea = try TPMTPublic(attestationKey.publicArea)
            #expect(try aik.publicKey == VerifyingKey(p256X: akArea.x, y: akArea.y), "the certificate is for the AK")
            let certified = try await harness.auditEvents().filter { $0.type == .attestationCertified }
            #expect(certified.count == 1 && certified.first?.outcome == .success && certified.first?.details == nil, "no secret of the activation in the event")

            let challenge = try SecureRandom.bytes(count: 32)
            let registration = try await Self.attestedRegistration(tpm, attestationKey, aik: aik, challenge: challenge)
            let attestation = try AttestationObject(encoded: registration.response.attestationObject.data)
            let vouching = try TPMAttestationStatement(attestation.statement).verify(
                authenticatorData: attestation.authenticatorData, clientDataHash: try DigestAlgorithm.sha256.hash(registration.response.clientDataJSON.data),
                roots: [root]
            )
            #expect(vouching == aik)
        }
    }

    @Test(
        "py_webauthn and python-fido2 accept the tpm registration with the CA's published root",
        .requires("python3 with webauthn and fido2 not found: skipped") { await PythonInterop.available(["webauthn", "fido2"]) }
    )
    func independentVerifiers() async throws {
        try await Self.withCA { harness in
            let tpm = try TPM.system()
            let attestationKey = try await Blocking.runThrowing { try tpm.createAttestationKey() }
            let (aik, _, _) = try await Self.certificate(harness.issuer, tpm, attestationKey)
            let (pem, _) = try await Self.root(harness.issuer)
            let challenge = try SecureRandom.bytes(count: 32)
            let registration = try await Self.attestedRegistration(tpm, attestationKey, aik: aik, challenge: challenge)
            let input = harness.directory.url.appendingPathComponent("tpm-interop.json")
            try JSONValue.object([
                "rpId": .string("example.com"), "origin": .string("https://example.com"), "challenge": .string(Base64URL.encode(challenge)),
                "registration": try JSONValue(json: try registration.json()), "root": .string(pem),
            ]).json().write(to: input)
            let (status, output) = try await PythonInterop.run("tpm_attestation_interop.py", [input.path])
            print(output)
            #expect(status == 0, "\(output)")
        }
    }

    @Test("refused by name: an EK certificate not from --ek-roots, an AK that could leave its TPM, a wrong secret, a replayed activation, an altered one, and no CA at all")
    func hostile() async throws {
        let directory = try TemporaryDirectory()
        let unrelated = try await ManufacturedTPM.unrelatedRSACertificate(in: directory.url)
        try await Self.withCA { harness in
            let tpm = try TPM.system()
            let attestationKey = try await Blocking.runThrowing { try tpm.createAttestationKey() }

            // An EK certificate not from the configured roots (a self-made one).
            let foreign = try await Self.post(harness.issuer, ProtocolPath.attestationActivations, try Self.activationRequest(tpm, attestationKey, endorsement: unrelated))
            #expect(foreign.status == 400 && foreign.errorCode == "invalid_endorsement")

            // An AK without fixedTPM (bit 1 of objectAttributes, bytes 4 to 8 of TPMT_PUBLIC),
            // and one that can also decrypt.
            for (index, mask) in [(7, UInt8(0x02)), (5, UInt8(0x02))] {
                var area = attestationKey.publicArea
                area[area.startIndex + index] ^= mask
                let weak = try await Self.post(harness.issuer, ProtocolPath.attestationActivations, try Self.activationRequest(tpm, attestationKey, area: area))
                #expect(weak.status == 400 && weak.errorCode == "invalid_endorsement", "\(String(decoding: weak.body, as: UTF8.self))")
            }

            // A wrong secret, then the right one, then the same again (a replay).
            let started = try await Self.post(harness.issuer, ProtocolPath.attestationActivations, try Self.activationRequest(tpm, attestationKey))
            let activation = try JSONDecoder().decode(AttestationExchange.Activation.self, from: started.body)
            let guessed = try await Self.post(harness.issuer, ProtocolPath.attestationCertificates, AttestationExchange.CertificateRequest(
                activation: activation.activation, credential: Base64URL.encode(try SecureRandom.bytes(count: 32))
            ))
            #expect(guessed.status == 400 && guessed.errorCode == "invalid_activation")
            let challenge = TPMCredentialProtection.Challenge(
                credentialBlob: try Base64URL.decode(activation.credentialBlob), encryptedSecret: try Base64URL.decode(activation.encryptedSecret)
            )
            let secret = try await Blocking.runThrowing { try tpm.activateCredential(attestationKey, challenge: challenge) }
            let right = AttestationExchange.CertificateRequest(activation: activation.activation, credential: Base64URL.encode(secret))
            #expect(try await Self.post(harness.issuer, ProtocolPath.attestationCertificates, right).status == 201)
            let replayed = try await Self.post(harness.issuer, ProtocolPath.attestationCertificates, right)
            #expect(replayed.status == 400 && replayed.errorCode == "invalid_activation", "a replayed activation secret buys nothing")

            // An altered activation.
            var altered = Array(activation.activation)
            altered[altered.count / 2] = altered[altered.count / 2] == "A" ? "B" : "A"
            let forged = try await Self.post(harness.issuer, ProtocolPath.attestationCertificates, AttestationExchange.CertificateRequest(
                activation: String(altered), credential: Base64URL.encode(secret)
            ))
            #expect(forged.status == 400 && forged.errorCode == "invalid_activation")
        }
        // Without --attestation-ca there is nothing to ask.
        try await ProviderHarness.run { harness in
            let response = try await HTTP1Transport().send(TransportRequest(method: HTTPMethod.get, url: harness.issuer.appendingPathComponent(ProtocolPath.attestationRoots)))
            #expect(response.status == 404)
            let tpm = try TPM.system()
            let asked = try await Self.post(harness.issuer, ProtocolPath.attestationActivations, try Self.activationRequest(tpm, try await Blocking.runThrowing { try tpm.createAttestationKey() }))
            #expect(asked.status == 404)
        }
    }
}
