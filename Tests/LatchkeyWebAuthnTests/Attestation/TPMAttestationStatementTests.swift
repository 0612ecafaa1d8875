import Foundation
import LatchkeyCrypto
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// A `tpm` attestation statement verified end to end (WebAuthn L3 §8.3.2 and §8.3.1), with
/// the structures written as a TPM writes them (``TPMStructureTests``) and the AIK and its
/// CA made by the `openssl` command (`AttestationCertificates`); then each way a statement
/// can lie, refused with `invalidAttestation`.
@Suite("TPM attestation statements")
struct TPMAttestationStatementTests {
    struct Registration {
        let authenticatorData: AuthenticatorData
        let clientDataHash: Data
        let credentialKey: SigningKey
    }

    static func registration(aaguid: Data = Data(count: 16)) throws -> Registration {
        let key = try SigningKey.generate(.es256)
        let data = try AuthenticatorData(
            rpIDHash: try DigestAlgorithm.sha256.hash(Data("example.com".utf8)), flags: [.userPresent, .userVerified], signCount: 0,
            attestedCredentialData: .init(aaguid: aaguid, credentialID: try SecureRandom.bytes(count: 32), credentialPublicKey: try COSEKey(key.publicKey))
        )
        return Registration(authenticatorData: data, clientDataHash: try DigestAlgorithm.sha256.hash(Data("client data".utf8)), credentialKey: key)
    }

    /// The statement a TPM with `certificates.aik` would make for `registration`; the
    /// closures change one part to make it lie.
    static func statement(
        _ registration: Registration, _ certificates: AttestationCertificates,
        pubAreaKey: COSEKey? = nil, attributes: UInt32 = 0x0004_0072, certifiedName: Data? = nil, toBeSigned: Data? = nil, signer: SigningKey? = nil,
        chain: [X509Certificate]? = nil, members: [CBOR.Entry] = []
    ) throws -> CBOR {
        let credentialKey = try #require(registration.authenticatorData.attestedCredentialData).credentialPublicKey
        let pubArea = TPMStructureTests.pubArea(pubAreaKey ?? credentialKey, attributes: attributes)
        let name = try certifiedName ?? TPMTPublic(pubArea).name
        let signed = toBeSigned ?? (registration.authenticatorData.bytes + registration.clientDataHash)
        let certInfo = TPMStructureTests.certInfo(name: name, extraData: try DigestAlgorithm.sha256.hash(signed))
        let signature = try (signer ?? certificates.aikKey).signature(for: certInfo)
        return .map([
            .init(.text("ver"), .text("2.0")),
            .init(.text("alg"), .integer(-7)),
            .init(.text("x5c"), .array((chain ?? [certificates.aik]).map { .bytes($0.derEncoded) })),
            .init(.text("sig"), .bytes(signature)),
            .init(.text("certInfo"), .bytes(certInfo)),
            .init(.text("pubArea"), .bytes(pubArea)),
        ] + members)
    }

    static func refusal(_ statement: CBOR, _ registration: Registration, roots: [X509Certificate]) -> WebAuthnError? {
        do {
            try TPMAttestationStatement(statement).verify(
                authenticatorData: registration.authenticatorData, clientDataHash: registration.clientDataHash, roots: roots
            )
            return nil
        } catch {
            return error
        }
    }

    @Test("a statement as a TPM makes it verifies and names its AIK certificate; every lie in it is refused")
    func verifyAndLies() async throws {
        let directory = try TemporaryDirectory()
        let certificates = try await AttestationCertificates.make(in: directory.url)
        let registration = try Self.registration()
        let roots = [certificates.root]

        let aik = try TPMAttestationStatement(try Self.statement(registration, certificates)).verify(
            authenticatorData: registration.authenticatorData, clientDataHash: registration.clientDataHash, roots: roots
        )
        #expect(aik == certificates.aik)

        let other = try COSEKey(SigningKey.generate(.es256).publicKey)
        let lies: [(String, CBOR, [X509Certificate], String)] = [
            ("certInfo names another key", try Self.statement(registration, certificates, certifiedName: try TPMTPublic(TPMStructureTests.pubArea(other)).name), roots, "certified name"),
            ("pubArea holds another key (a flipped coordinate)", try Self.statement(registration, certificates, pubAreaKey: other), roots, "pubArea holds another key"),
            ("extraData of another registration", try Self.statement(registration, certificates, toBeSigned: Data("another".utf8)), roots, "extraData"),
            ("a software key claiming tpm: sig by the credential key, not the AIK", try Self.statement(registration, certificates, signer: registration.credentialKey), roots, "sig is not the AIK"),
            // What a TPM certifies for a software key it loaded (TPM2_LoadExternal) or
            // imported (TPM2_Import): attributes without fixedTPM and sensitiveDataOrigin.
            ("a software key claiming tpm: loaded into the TPM from outside", try Self.statement(registration, certificates, attributes: 0x0004_0040), roots, "not made in the TPM"),
            ("a duplicable key (fixedParent clear)", try Self.statement(registration, certificates, attributes: 0x0004_0062), roots, "not made in the TPM"),
            ("an AIK certificate from another CA", try Self.statement(registration, certificates), [certificates.otherRoot], "trusted attestation root"),
            ("no trusted root at all", try Self.statement(registration, certificates), [], "trusted attestation root"),
        ]
        for (name, statement, trusted, because) in lies {
            let error = Self.refusal(statement, registration, roots: trusted)
            #expect(error?.code == .invalidAttestation && error?.reason.contains(because) == true, "\(name): \(String(describing: error))")
        }
        // A statement for this registration does not verify for another one.
        let later = try Self.registration()
        #expect(Self.refusal(try Self.statement(registration, certificates), later, roots: roots)?.code == .invalidAttestation)
    }

    @Test("AIK certificates that break §8.3.1 are refused: a subject, no AIK usage, a CA, a SAN that is not critical, no basicConstraints")
    func certificateRules() async throws {
        let base = AttestationCertificates.aikSection
        let variants: [(String, String, String, String)] = [
            ("a subject", base, "/CN=aik", "subject is not empty"),
            ("no tcg-kp-AIKCertificate usage", base.replacingOccurrences(of: "2.23.133.8.3", with: "clientAuth"), "/", "2.23.133.8.3"),
            ("a CA", base.replacingOccurrences(of: "CA:FALSE", with: "CA:TRUE"), "/", "CA false"),
            ("a SAN that is not critical", base.replacingOccurrences(of: "critical, dirName", with: "dirName"), "/", "critical subjectAlternativeName"),
            ("no basicConstraints", base.replacingOccurrences(of: "basicConstraints = CA:FALSE\n", with: ""), "/", "CA false"),
        ]
        let registration = try Self.registration()
        for (name, extensions, subject, because) in variants {
            let directory = try TemporaryDirectory()
            let certificates = try await AttestationCertificates.make(in: directory.url, aikExtensions: extensions, subject: subject)
            let error = Self.refusal(try Self.statement(registration, certificates), registration, roots: [certificates.root])
            #expect(error?.code == .invalidAttestation && error?.reason.contains(because) == true, "\(name): \(String(describing: error))")
        }
    }

    @Test("the statement's shape: ver, alg, x5c, and nothing else are required")
    func shape() async throws {
        let directory = try TemporaryDirectory()
        let certificates = try await AttestationCertificates.make(in: directory.url)
        let registration = try Self.registration()
        let valid = try Self.statement(registration, certificates)
        func without(_ key: String) -> CBOR { .map((valid.mapEntries ?? []).filter { $0.key != .text(key) }) }
        func replacing(_ key: String, _ value: CBOR) -> CBOR {
            .map((valid.mapEntries ?? []).map { $0.key == .text(key) ? .init($0.key, value) : $0 })
        }
        func code(_ statement: CBOR) -> WebAuthnError.Code? {
            do {
                _ = try TPMAttestationStatement(statement)
                return nil
            } catch {
                return error.code
            }
        }
        for key in ["ver", "alg", "x5c", "sig", "certInfo", "pubArea"] {
            #expect(code(without(key)) == .invalidAttestation, "without \(key)")
        }
        #expect(code(replacing("ver", .text("1.0"))) == .invalidAttestation)
        #expect(code(replacing("alg", .integer(-8))) == .unsupportedAlgorithm)
        #expect(code(replacing("x5c", .array([]))) == .invalidAttestation)
        #expect(code(replacing("x5c", .array(Array(repeating: .bytes(certificates.aik.derEncoded), count: 5)))) == .invalidAttestation)
        #expect(code(replacing("x5c", .array([.bytes(Data("junk".utf8))]))) == .invalidAttestation)
        #expect(code(replacing("certInfo", .bytes(Data([0xFF])))) == .malformedTPMStructure)
        #expect(code(.map((valid.mapEntries ?? []) + [.init(.text("extra"), .integer(1))])) == .invalidAttestation)
    }

    @Test("RelyingParty registers a tpm attestation that chains to its attestation roots, refuses one from another CA, and calls tpm unsupported without roots")
    func relyingParty() async throws {
        let directory = try TemporaryDirectory()
        let certificates = try await AttestationCertificates.make(in: directory.url)
        let fixture = try AuthenticatorFixture()
        let (made, _) = try fixture.authenticator.makeCredential(AuthenticatorFixture.creationOptions(), origin: AuthenticatorFixture.origin)
        let attestation = try AttestationObject(encoded: made.response.attestationObject.data)
        let registration = Registration(
            authenticatorData: attestation.authenticatorData, clientDataHash: try DigestAlgorithm.sha256.hash(made.response.clientDataJSON.data),
            credentialKey: try SigningKey.generate(.es256)
        )
        var response = made
        response.response.attestationObject = Base64URLBytes(
            AttestationObject(format: "tpm", statement: try Self.statement(registration, certificates), authenticatorData: attestation.authenticatorData).encoded
        )
        let challenge = Data(repeating: 7, count: 32)

        var trusting = AuthenticatorFixture.relyingParty
        trusting.attestationRoots = [certificates.root]
        let credential = try trusting.verifyRegistration(response, challenge: challenge)
        #expect(credential.attestationFormat == "tpm")

        var other = AuthenticatorFixture.relyingParty
        other.attestationRoots = [certificates.otherRoot]
        let fromOtherCA = #expect(throws: WebAuthnError.self) { try other.verifyRegistration(response, challenge: challenge) }
        #expect(fromOtherCA?.code == .invalidAttestation)
        let withoutRoots = #expect(throws: WebAuthnError.self) { try AuthenticatorFixture.relyingParty.verifyRegistration(response, challenge: challenge) }
        #expect(withoutRoots?.code == .unsupportedAttestationFormat)
    }
}
