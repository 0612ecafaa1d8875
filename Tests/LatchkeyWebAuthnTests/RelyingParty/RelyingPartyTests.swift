import Foundation
import LatchkeyCrypto
@testable import LatchkeyWebAuthn
import Testing

/// The relying-party verifier against the software authenticator: every tampered field
/// is refused with its own code, in the spec's order.
@Suite("Relying party verification")
struct RelyingPartyTests {
    typealias Fixture = AuthenticatorFixture

    @Test("registrations and assertions made by the software authenticator verify", arguments: [-7, -8], [nil, "direct"])
    func roundTrip(_ algorithm: Int, _ attestation: String?) throws {
        let fixture = try Fixture()
        let (registration, _) = try fixture.authenticator.makeCredential(Fixture.creationOptions(algorithms: [algorithm], attestation: attestation), origin: Fixture.origin)
        let credential = try Fixture.relyingParty.verifyRegistration(registration, challenge: Data(repeating: 7, count: 32))
        #expect(credential.attestationFormat == (attestation == nil ? "none" : "packed"))
        #expect(credential.publicKey.algorithm.coseIdentifier == algorithm)
        #expect(!credential.backupEligible && !credential.backupState && credential.userVerified)
        #expect(registration.id == Base64URL.encode(registration.rawId.data))

        var stored = credential
        for expectedCount in 1...3 {
            let (assertion, _) = try fixture.authenticator.getAssertion(Fixture.requestOptions(), origin: Fixture.origin)
            let verified = try Fixture.relyingParty.verifyAuthentication(assertion, challenge: Data(repeating: 9, count: 32), credential: stored, allowedCredentialIDs: [credential.id])
            #expect(verified.signCount == UInt32(expectedCount))
            #expect(verified.userHandle == Data("user-1".utf8))
            stored.signCount = verified.signCount
        }
    }

    @Test("each tampered registration field fails with its own code")
    func tamperedRegistrations() throws {
        let fixture = try Fixture()
        let challenge = Data(repeating: 7, count: 32)
        let (good, _) = try fixture.authenticator.makeCredential(Fixture.creationOptions(attestation: "direct"), origin: Fixture.origin)
        let relyingParty = Fixture.relyingParty

        func withClientData(_ change: (inout CollectedClientData) -> Void) throws -> RegistrationResponseJSON {
            var clientData = try CollectedClientData(json: good.response.clientDataJSON.data)
            change(&clientData)
            var response = good
            response.response.clientDataJSON = Base64URLBytes(clientData.serialized())
            return response
        }
        func withAuthData(flags: AuthenticatorData.Flags? = nil, rpID: String? = nil) throws -> RegistrationResponseJSON {
            let attestation = try AttestationObject(encoded: good.response.attestationObject.data)
            let old = attestation.authenticatorData
            let data = try AuthenticatorData(
                rpIDHash: rpID.map { try DigestAlgorithm.sha256.hash(Data($0.utf8)) } ?? old.rpIDHash,
                flags: flags ?? old.flags, signCount: old.signCount, attestedCredentialData: old.attestedCredentialData
            )
            var response = good
            response.response.attestationObject = Base64URLBytes(AttestationObject(format: attestation.format, statement: attestation.statement, authenticatorData: data).encoded)
            return response
        }
        func withStatement(format: String, _ statement: CBOR) throws -> RegistrationResponseJSON {
            let attestation = try AttestationObject(encoded: good.response.attestationObject.data)
            var response = good
            response.response.attestationObject = Base64URLBytes(AttestationObject(format: format, statement: statement, authenticatorData: attestation.authenticatorData).encoded)
            return response
        }
        var wrongID = good
        wrongID.rawId = Base64URLBytes(Data(count: 32))
        var verifyingUV = relyingParty
        verifyingUV.requiresUserVerification = true
        var onlyEd25519 = relyingParty
        onlyEd25519.allowedAlgorithms = [.ed25519]

        let cases: [(String, RelyingParty, RegistrationResponseJSON, WebAuthnError.Code)] = [
            ("type", relyingParty, try withClientData { $0.type = "webauthn.get" }, .wrongCeremonyType),
            ("challenge", relyingParty, try withClientData { $0.challenge = Data(count: 32) }, .challengeMismatch),
            ("origin", relyingParty, try withClientData { $0.origin = "https://evil.example" }, .originMismatch),
            ("cross origin", relyingParty, try withClientData { $0.crossOrigin = true }, .crossOriginNotAllowed),
            ("id", relyingParty, wrongID, .credentialIDMismatch),
            ("rp id hash", relyingParty, try withAuthData(rpID: "other.example"), .rpIDHashMismatch),
            ("user present", relyingParty, try withAuthData(flags: [.userVerified]), .userNotPresent),
            ("user verified", verifyingUV, try withAuthData(flags: [.userPresent]), .userNotVerified),
            ("BS without BE", relyingParty, try withAuthData(flags: [.userPresent, .backupState]), .backupStateWithoutEligibility),
            ("algorithm", onlyEd25519, good, .algorithmNotAllowed),
            ("attestation signature", relyingParty, try withStatement(format: "packed", .map([.init(.text("alg"), .integer(-7)), .init(.text("sig"), .bytes(Data(count: 70)))])), .invalidAttestation),
            ("attestation alg", relyingParty, try withStatement(format: "packed", .map([.init(.text("alg"), .integer(-8)), .init(.text("sig"), .bytes(Data(count: 64)))])), .invalidAttestation),
            ("none with statement", relyingParty, try withStatement(format: "none", .map([.init(.text("sig"), .bytes(Data()))])), .invalidAttestation),
            ("x5c", relyingParty, try withStatement(format: "packed", .map([.init(.text("alg"), .integer(-7)), .init(.text("sig"), .bytes(Data())), .init(.text("x5c"), .array([]))])), .unsupportedAttestationFormat),
            ("format", relyingParty, try withStatement(format: "tpm", .map([])), .unsupportedAttestationFormat),
        ]
        for (name, verifier, response, code) in cases {
            #expect(throws: WebAuthnError(code: code, reason: ""), "\(name)") { try verifier.verifyRegistration(response, challenge: challenge) }
        }
        #expect(throws: Never.self) { try relyingParty.verifyRegistration(good, challenge: challenge) }
    }

    @Test("each tampered assertion fails with its own code; counters must grow")
    func tamperedAssertions() throws {
        let fixture = try Fixture()
        let (registration, _) = try fixture.authenticator.makeCredential(Fixture.creationOptions(), origin: Fixture.origin)
        let relyingParty = Fixture.relyingParty
        var credential = try relyingParty.verifyRegistration(registration, challenge: Data(repeating: 7, count: 32))
        let challenge = Data(repeating: 9, count: 32)
        let (good, _) = try fixture.authenticator.getAssertion(Fixture.requestOptions(), origin: Fixture.origin)

        var badSignature = good
        var signature = good.response.signature.data
        signature[signature.count - 2] ^= 1
        badSignature.response.signature = Base64URLBytes(signature)
        var badFlags = good
        var data = good.response.authenticatorData.data
        data[32] &= ~AuthenticatorData.Flags.userPresent.rawValue
        badFlags.response.authenticatorData = Base64URLBytes(data)
        var changedBE = good
        data = good.response.authenticatorData.data
        data[32] |= AuthenticatorData.Flags.backupEligible.rawValue
        changedBE.response.authenticatorData = Base64URLBytes(data)
        var otherCredential = credential
        otherCredential.id = Data(count: 32)

        let cases: [(String, AuthenticationResponseJSON, RelyingParty.RegisteredCredential, [Data], WebAuthnError.Code)] = [
            ("not allowed", good, credential, [Data(count: 32)], .credentialNotAllowed),
            ("other credential", good, otherCredential, [], .credentialIDMismatch),
            ("user present", badFlags, credential, [], .userNotPresent),
            ("backup eligibility", changedBE, credential, [], .backupEligibilityChanged),
            ("signature", badSignature, credential, [], .invalidSignature),
        ]
        for (name, response, stored, allowed, code) in cases {
            #expect(throws: WebAuthnError(code: code, reason: ""), "\(name)") {
                try relyingParty.verifyAuthentication(response, challenge: challenge, credential: stored, allowedCredentialIDs: allowed)
            }
        }
        // A replay, or a counter going backwards, is refused once the stored counter moved on.
        let first = try relyingParty.verifyAuthentication(good, challenge: challenge, credential: credential)
        credential.signCount = first.signCount
        #expect(throws: WebAuthnError.signCountNotIncreased(reason: "")) {
            try relyingParty.verifyAuthentication(good, challenge: challenge, credential: credential)
        }
    }
}
