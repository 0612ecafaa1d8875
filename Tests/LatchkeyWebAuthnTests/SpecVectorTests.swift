import Foundation
import LatchkeyOAuth
import LatchkeyCrypto
@testable import LatchkeyWebAuthn
import LatchkeyTestSupport
import Testing

/// WebAuthn Level 3 §16 test vectors (Vectors/webauthn-l3-section16.json).
@Suite("WebAuthn L3 §16 vectors")
struct SpecVectorTests {
    struct Case {
        let id: String
        let fields: [String: String]
        func hex(_ name: String) throws -> Data { try Data(hex: try #require(fields[name], "vector field \(name)")) }
    }

    /// The file's cases; its other members name the source.
    struct VectorFile: Decodable {
        var cases: [[String: String]]
    }

    static let cases: [Case] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/webauthn-l3-section16.json")
        guard let data = try? Data(contentsOf: url),
              let cases = try? JSONDecoder().decode(VectorFile.self, from: data).cases
        else { return [] }
        return cases.map { Case(id: $0["id"] ?? "?", fields: $0) }
    }()

    @Test("the vector file loads")
    func loads() {
        #expect(Self.cases.map(\.id) == ["16.2", "16.3", "16.11"])
    }

    @Test("registration and authentication verify", arguments: cases.map(\.id))
    func verify(_ id: String) throws {
        let vector = try #require(Self.cases.first { $0.id == id })
        let attestationBytes = try vector.hex("reg_attestationObject")
        let attestation = try AttestationObject(encoded: attestationBytes)
        let attested = try #require(attestation.authenticatorData.attestedCredentialData)
        #expect(attested.credentialID == (try vector.hex("credentialId")))
        #expect(attested.aaguid == (try vector.hex("aaguid")))
        // Our canonical encoder reproduces the authenticator's bytes exactly.
        #expect(attestation.encoded == attestationBytes)
        let embeddedKey = try CBOR.decodePrefix(Data(attestation.authenticatorData.bytes.dropFirst(55 + attested.credentialID.count))).0
        #expect(attested.credentialPublicKey.encoded == embeddedKey.encoded())

        var relyingParty = RelyingParty(id: "example.org", origins: ["https://example.org"])
        relyingParty.acceptsUncheckedAttestation = attestation.statement["x5c"] != nil
        let registration = try RegistrationResponseJSON(
            credentialID: attested.credentialID, clientDataJSON: vector.hex("reg_clientDataJSON"), attestationObject: attestation
        )
        let credential = try relyingParty.verifyRegistration(registration, challenge: try vector.hex("reg_challenge"))
        #expect(credential.attestationFormat == attestation.format)

        let assertion = try AuthenticationResponseJSON(
            credentialID: attested.credentialID,
            clientDataJSON: vector.hex("auth_clientDataJSON"),
            authenticatorData: vector.hex("auth_authenticatorData"),
            signature: vector.hex("auth_signature"),
            userHandle: nil
        )
        let verified = try relyingParty.verifyAuthentication(assertion, challenge: try vector.hex("auth_challenge"), credential: credential)
        #expect(verified.signCount == 0)

        // A changed challenge or signature is refused with its own code.
        #expect(throws: WebAuthnError.challengeMismatch(reason: "")) {
            try relyingParty.verifyAuthentication(assertion, challenge: Data(count: 32), credential: credential)
        }
        var forged = assertion
        forged.response.signature = Base64URLBytes(Data(try vector.hex("auth_signature").reversed()))
        #expect(throws: WebAuthnError.invalidSignature(reason: "")) {
            try relyingParty.verifyAuthentication(forged, challenge: try vector.hex("auth_challenge"), credential: credential)
        }
    }
}
