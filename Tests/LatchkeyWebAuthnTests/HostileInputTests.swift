import Foundation
import LatchkeyCrypto
import LatchkeyTestSupport
@testable import LatchkeyWebAuthn
import Testing

/// The WebAuthn formats' and relying party's share of the hostile-input list
/// (LatchkeyTests' HostileInputSuite has the attacks across modules): each named case
/// must be refused with its own ``WebAuthnError/Code``.
@Suite("WebAuthn hostile input")
struct HostileInputTests {
    /// What an attack works in: a fresh private directory and a vault key file in it.
    struct Context: Sendable {
        let temporary: TemporaryDirectory
        let keyFile: URL
        var directory: URL { temporary.url }

        init() throws {
            temporary = try TemporaryDirectory()
            keyFile = try temporary.keyFile()
        }
    }

    typealias Attack = HostileCase<Context, String>

    static let attacks: [Attack] = [
        Attack("CBOR: indefinite-length map", "malformedCBOR") { _ in _ = try CBOR.decode(Data([0xBF, 0x01, 0x02, 0xFF])) },
        Attack("CBOR: nested 100 deep", "malformedCBOR") { _ in _ = try CBOR.decode(Data(repeating: 0x81, count: 100) + [0x00]) },
        Attack("CBOR: duplicate map keys", "malformedCBOR") { _ in _ = try CBOR.decode(Data([0xA2, 0x01, 0x01, 0x01, 0x02])) },
        Attack("CBOR: trailing bytes", "malformedCBOR") { _ in _ = try CBOR.decode(Data([0x01, 0x02])) },
        Attack("CBOR: byte string claiming 4 GiB", "malformedCBOR") { _ in _ = try CBOR.decode(Data([0x5A, 0xFF, 0xFF, 0xFF, 0xFF, 0x00])) },
        Attack("CBOR: 1000-item array", "malformedCBOR") { _ in _ = try CBOR.decode(Data([0x99, 0x03, 0xE8]) + Data(repeating: 0, count: 1000)) },
        Attack("authenticatorData: truncated below 37 bytes", "malformedAuthenticatorData") { _ in _ = try AuthenticatorData(bytes: Data(count: 36)) },
        Attack("authenticatorData: AT flag without attested data", "malformedAuthenticatorData") { _ in
            var bytes = Data(count: 37)
            bytes[32] = 0x41
            _ = try AuthenticatorData(bytes: bytes)
        },
        Attack("attestationObject: not a map", "malformedAttestationObject") { _ in _ = try AttestationObject(encoded: Data([0x80])) },
        Attack("COSE key: ES256 on P-384", "unsupportedAlgorithm") { _ in
            _ = try COSEKey(encoded: CBOR.map([
                .init(.unsigned(1), .unsigned(2)), .init(.unsigned(3), .negative(6)), .init(.negative(0), .unsigned(2)),
                .init(.negative(1), .bytes(Data(count: 32))), .init(.negative(2), .bytes(Data(count: 32))),
            ]).encoded())
        },
        Attack("clientDataJSON: not JSON", "malformedClientData") { _ in _ = try CollectedClientData(json: Data("<xml/>".utf8)) },
        Attack("L3 JSON: challenge with base64 padding", "malformedJSON") { _ in
            _ = try PublicKeyCredentialRequestOptionsJSON(json: Data(#"{"challenge":"YWJj="}"#.utf8))
        },
        Attack("assertion with a flipped signature bit", "invalidSignature") { context in
            let (rp, record, options, authenticator) = try relyingPartyFixture(context)
            var (assertion, _) = try authenticator.getAssertion(options.request, origin: rp.origin)
            var signature = assertion.response.signature.data
            signature[signature.count - 1] ^= 1
            assertion.response.signature = Base64URLBytes(signature)
            _ = try rp.party.verifyAuthentication(assertion, challenge: options.request.challenge.data, credential: record)
        },
        Attack("assertion from another origin", "originMismatch") { context in
            let (rp, record, options, authenticator) = try relyingPartyFixture(context)
            let (assertion, _) = try authenticator.getAssertion(options.request, origin: "https://evil.example.com")
            _ = try rp.party.verifyAuthentication(assertion, challenge: options.request.challenge.data, credential: record)
        },
        Attack("assertion over another challenge", "challengeMismatch") { context in
            let (rp, record, options, authenticator) = try relyingPartyFixture(context)
            let (assertion, _) = try authenticator.getAssertion(options.request, origin: rp.origin)
            _ = try rp.party.verifyAuthentication(assertion, challenge: Data(count: 32), credential: record)
        },
        Attack("replayed assertion (counter did not grow)", "signCountNotIncreased") { context in
            let (rp, record, options, authenticator) = try relyingPartyFixture(context)
            let (assertion, _) = try authenticator.getAssertion(options.request, origin: rp.origin)
            let verified = try rp.party.verifyAuthentication(assertion, challenge: options.request.challenge.data, credential: record)
            var later = record
            later.signCount = verified.signCount
            _ = try rp.party.verifyAuthentication(assertion, challenge: options.request.challenge.data, credential: later)
        },
        Attack("assertion by a credential outside allowCredentials", "credentialNotAllowed") { context in
            let (rp, record, options, authenticator) = try relyingPartyFixture(context)
            let (assertion, _) = try authenticator.getAssertion(options.request, origin: rp.origin)
            _ = try rp.party.verifyAuthentication(assertion, challenge: options.request.challenge.data, credential: record, allowedCredentialIDs: [Data(count: 32)])
        },
        Attack("registration for another RP ID", "rpIDHashMismatch") { context in
            // The origin is one the RP accepts, but the authenticator scoped the credential
            // to a narrower RP ID, so rpIdHash differs (§7.1 step 13).
            let (rp, _, options, authenticator) = try relyingPartyFixture(context)
            var creation = options.creation
            creation.rp.id = "sub.\(rp.host)"
            let (registration, _) = try authenticator.makeCredential(creation, origin: "https://sub.\(rp.host)")
            let party = RelyingParty(id: rp.host, origins: [rp.origin, "https://sub.\(rp.host)"])
            _ = try party.verifyRegistration(registration, challenge: creation.challenge.data)
        },
    ]

    /// A relying party for example.com, a credential registered with it from a fresh
    /// software authenticator in the context's temporary directory, and request options.
    static func relyingPartyFixture(_ context: Context) throws -> (
        rp: (party: RelyingParty, origin: String, host: String),
        record: RelyingParty.RegisteredCredential,
        options: (creation: PublicKeyCredentialCreationOptionsJSON, request: PublicKeyCredentialRequestOptionsJSON),
        authenticator: SoftwareAuthenticator
    ) {
        let host = "example.com"
        let origin = "https://\(host)"
        let authenticator = SoftwareAuthenticator(vault: try KeyVault.open(
            at: context.directory.appendingPathComponent("rp-\(UUID().uuidString)"), key: .keyFile(context.keyFile)
        ))
        let creation = PublicKeyCredentialCreationOptionsJSON(
            rp: .init(id: host, name: "Example"), user: .init(id: Data("u".utf8), name: "u", displayName: "U"),
            challenge: try SecureRandom.bytes(count: 32), pubKeyCredParams: [.init(alg: -7)]
        )
        let party = RelyingParty(id: host, origins: [origin])
        let (registration, _) = try authenticator.makeCredential(creation, origin: origin)
        let record = try party.verifyRegistration(registration, challenge: creation.challenge.data)
        let request = PublicKeyCredentialRequestOptionsJSON(challenge: try SecureRandom.bytes(count: 32), rpId: host)
        return ((party, origin, host), record, (creation, request), authenticator)
    }

    @Test("each attack is refused with its own code", arguments: attacks)
    func refuse(_ attack: Attack) async throws {
        do {
            try await attack.run(try Context())
            Issue.record("\(attack.name): accepted")
        } catch {
            let code: String = switch error {
            case let error as WebAuthnError: "\(error.code)"
            default: "untyped: \(error)"
            }
            #expect(code == attack.expected, "\(attack.name): \(error)")
        }
    }
}
