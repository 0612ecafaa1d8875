import Foundation
import LatchkeyOAuth
import LatchkeyCrypto
@testable import LatchkeyWebAuthn
import Testing

@Suite("Software authenticator")
struct SoftwareAuthenticatorTests {
    typealias Fixture = AuthenticatorFixture

    @Test("RP IDs and origins a browser would refuse are refused")
    func relyingPartyIDs() throws {
        let fixture = try Fixture()
        let refused: [(String, String?, WebAuthnError.Code)] = [
            ("https://login.example.com", "com", .invalidRelyingPartyID),
            ("https://login.example.co.uk", "co.uk", .invalidRelyingPartyID),
            ("https://me.github.io", "github.io", .invalidRelyingPartyID),
            ("https://login.example.com", "other.com", .invalidRelyingPartyID),
            ("https://evilexample.com", "example.com", .invalidRelyingPartyID),
            ("https://example.com", "login.example.com", .invalidRelyingPartyID),
            ("https://127.0.0.1", "0.0.1", .invalidRelyingPartyID),
            ("http://login.example.com", nil, .insecureOrigin),
            ("ftp://login.example.com", nil, .insecureOrigin),
            ("https://login.example.com/path", nil, .insecureOrigin),
            ("not a url", nil, .insecureOrigin),
        ]
        for (origin, rpID, code) in refused {
            #expect(throws: WebAuthnError(code: code, reason: ""), "\(origin) / \(rpID ?? "-")") {
                try fixture.authenticator.makeCredential(Fixture.creationOptions(rpID: rpID), origin: origin)
            }
        }
        let accepted: [(String, String?)] = [
            ("https://login.example.com", "example.com"), ("https://login.example.com", nil),
            ("https://shop.example.co.uk", "example.co.uk"), ("http://localhost:8080", nil), ("http://127.0.0.1:5000", "127.0.0.1"),
        ]
        for (origin, rpID) in accepted {
            #expect(throws: Never.self, "\(origin)") { try fixture.authenticator.makeCredential(Fixture.creationOptions(rpID: rpID), origin: origin) }
        }
    }

    @Test("excluded credentials, algorithm choice, credential choice and counters")
    func ceremonies() throws {
        let fixture = try Fixture()
        let (first, credential) = try fixture.authenticator.makeCredential(Fixture.creationOptions(algorithms: [-257, -8, -7]), origin: Fixture.origin)
        #expect(credential.algorithm == .ed25519)
        #expect(first.rawId.data.count == SoftwareAuthenticator.credentialIDLength)
        #expect(throws: WebAuthnError.excludedCredentialExists(reason: "")) {
            try fixture.authenticator.makeCredential(Fixture.creationOptions(exclude: [first.rawId.data]), origin: Fixture.origin)
        }
        #expect(throws: WebAuthnError.unsupportedAlgorithm(reason: "")) {
            try fixture.authenticator.makeCredential(Fixture.creationOptions(algorithms: [-257]), origin: Fixture.origin)
        }
        // A TPM key is ES256 only: options offering EdDSA alone are refused before any
        // TPM is asked, whatever TPM2OPENSSL_TCTI says.
        let tpmOnlyEdDSA = #expect(throws: WebAuthnError.self) {
            try fixture.authenticator.makeCredential(Fixture.creationOptions(algorithms: [-8]), origin: Fixture.origin, protection: .tpm)
        }
        #expect(tpmOnlyEdDSA?.code == .unsupportedAlgorithm && tpmOnlyEdDSA?.reason.contains("TPM") == true)
        let (second, _) = try fixture.authenticator.makeCredential(Fixture.creationOptions(), origin: Fixture.origin)
        #expect(throws: WebAuthnError.credentialChoiceRequired(reason: "")) {
            try fixture.authenticator.getAssertion(Fixture.requestOptions(), origin: Fixture.origin)
        }
        #expect(try fixture.authenticator.candidates(for: Fixture.requestOptions(), origin: Fixture.origin).count == 2)
        let (assertion, used) = try fixture.authenticator.getAssertion(Fixture.requestOptions(), origin: Fixture.origin, credentialID: second.rawId.data)
        #expect(assertion.rawId == second.rawId && used.metadata.signCount == 1)
        let (onlyAllowed, _) = try fixture.authenticator.getAssertion(Fixture.requestOptions(allow: [first.rawId.data]), origin: Fixture.origin)
        #expect(onlyAllowed.rawId == first.rawId)
        #expect(throws: WebAuthnError.noMatchingCredential(reason: "")) {
            try fixture.authenticator.getAssertion(Fixture.requestOptions(allow: [Data(count: 32)]), origin: Fixture.origin)
        }
        #expect(throws: WebAuthnError.noMatchingCredential(reason: "")) {
            try fixture.authenticator.getAssertion(PublicKeyCredentialRequestOptionsJSON(challenge: Data(count: 32), rpId: "other.example.org"), origin: "https://other.example.org")
        }

        // Signing with a candidate already listed: the counter is read afresh, and a
        // credential that does not fit the request (another RP, not allowed) is refused.
        let listed = try #require(try fixture.authenticator.candidates(for: Fixture.requestOptions(), origin: Fixture.origin).first { $0.metadata.credentialID.data == second.rawId.data })
        let (again, counted) = try fixture.authenticator.getAssertion(Fixture.requestOptions(), origin: Fixture.origin, using: listed)
        #expect(again.rawId == second.rawId && counted.metadata.signCount == 2)
        let (stale, recounted) = try fixture.authenticator.getAssertion(Fixture.requestOptions(), origin: Fixture.origin, using: listed)
        #expect(stale.rawId == second.rawId && recounted.metadata.signCount == 3)
        #expect(throws: WebAuthnError.noMatchingCredential(reason: "")) {
            try fixture.authenticator.getAssertion(Fixture.requestOptions(allow: [first.rawId.data]), origin: Fixture.origin, using: listed)
        }
        #expect(throws: WebAuthnError.noMatchingCredential(reason: "")) {
            try fixture.authenticator.getAssertion(PublicKeyCredentialRequestOptionsJSON(challenge: Data(count: 32), rpId: "other.example.org"), origin: "https://other.example.org", using: listed)
        }
    }

    @Test("L3 JSON: options parse bare or wrapped with unknown members; responses are emitted strictly")
    func l3JSON() throws {
        let options = #"{"publicKey":{"rp":{"id":"example.com","name":"Ex"},"user":{"id":"dXNlcg","name":"u","displayName":"U"},"challenge":"AAEC","pubKeyCredParams":[{"type":"public-key","alg":-7}],"hints":["client-device"],"extensions":{"credProps":true},"attestation":"none"}}"#
        let wrapped = try PublicKeyCredentialCreationOptionsJSON(json: Data(options.utf8))
        #expect(wrapped.rp.id == "example.com" && wrapped.challenge.data == Data([0, 1, 2]) && wrapped.user.id.data == Data("user".utf8))
        let bare = #"{"challenge":"AAEC","rpId":"example.com","allowCredentials":[],"userVerification":"preferred","unknown":1}"#
        #expect(try PublicKeyCredentialRequestOptionsJSON(json: Data(bare.utf8)).rpId == "example.com")
        for bad in ["{}", #"{"challenge":"AA=="}"#, #"{"challenge":5}"#, "[", String(repeating: " ", count: 300_000)] {
            #expect(throws: WebAuthnError.malformedJSON(reason: ""), "\(bad.prefix(20))") { try PublicKeyCredentialRequestOptionsJSON(json: Data(bad.utf8)) }
        }

        let fixture = try Fixture()
        let (registration, _) = try fixture.authenticator.makeCredential(Fixture.creationOptions(), origin: Fixture.origin)
        let object = try JSONValue(json: registration.json())
        let response = try #require(object["response"])
        #expect(object["id"]?.stringValue == object["rawId"]?.stringValue)
        #expect(object["clientExtensionResults"]?.objectValue?.isEmpty == true)
        #expect(object["type"]?.stringValue == "public-key")
        #expect(response["publicKeyAlgorithm"]?.intValue == -7 && response["transports"]?.arrayValue?.compactMap(\.stringValue) == ["internal"])
        for field in ["clientDataJSON", "authenticatorData", "publicKey", "attestationObject"] {
            let text = try #require(response[field]?.stringValue, "\(field)")
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"), "\(field)")
        }
        #expect(try RegistrationResponseJSON(json: registration.json()) == registration)
    }
}
