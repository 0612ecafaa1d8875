import Foundation
import LatchkeyCrypto
@testable import LatchkeyWebAuthn
import LatchkeyTestSupport
import Testing

@Suite("CBOR, COSE keys, authenticator data, client data")
struct FormatTests {
    @Test("CBOR round trips with shortest heads and canonical map order")
    func cborRoundTrip() throws {
        let cases: [(CBOR, String)] = [
            (.unsigned(0), "00"), (.unsigned(23), "17"), (.unsigned(24), "1818"), (.unsigned(256), "190100"),
            (.unsigned(65536), "1a00010000"), (.unsigned(1 << 32), "1b0000000100000000"),
            (.integer(-1), "20"), (.integer(-7), "26"), (.integer(-25), "3818"), (.integer(-257), "390100"),
            (.bytes(Data([1, 2])), "420102"), (.text("fmt"), "63666d74"), (.bool(true), "f5"), (.bool(false), "f4"), (.null, "f6"),
            (.array([.unsigned(1), .text("a")]), "82016161"),
            // Keys sort by encoded length, then bytes: 3 (03) before -1 (20) before "a" (6161).
            (.map([.init(.text("a"), .unsigned(1)), .init(.integer(-1), .unsigned(2)), .init(.unsigned(3), .unsigned(4))]), "a303042002616101"),
        ]
        for (item, hex) in cases {
            #expect(item.encoded() == (try Data(hex: hex)), "\(item)")
            let decoded = try CBOR.decode(try Data(hex: hex))
            #expect(decoded.encoded() == (try Data(hex: hex)))
        }
    }

    @Test("the CBOR decoder refuses every non-canonical or hostile form with malformedCBOR")
    func cborHostile() {
        let refused: [(String, String)] = [
            ("empty", ""), ("truncated head", "19"), ("truncated string", "43010203"[...].dropLast(2).description),
            ("non-minimal uint", "1817"), ("non-minimal 16-bit", "190017"), ("non-minimal length", "5801ff"),
            ("indefinite bytes", "5fff"), ("indefinite array", "9fff"), ("reserved info", "1c"),
            ("tag", "c11a514b67b0"), ("float", "f93c00"), ("undefined", "f7"),
            ("duplicate key", "a2616101616102"), ("array map key", "a1800101"), ("trailing byte", "0000"),
            ("invalid UTF-8", "62c328"), ("huge length", "5bffffffffffffffff"),
            ("too deep", String(repeating: "81", count: 9) + "00"), ("too many items", "9a00010000"),
        ]
        for (name, hex) in refused {
            #expect(throws: WebAuthnError.malformedCBOR(reason: ""), "\(name)") { try CBOR.decode(try Data(hex: hex)) }
        }
        #expect(throws: WebAuthnError.malformedCBOR(reason: "")) { try CBOR.decode(Data(count: 70_000)) }
    }

    @Test("COSE keys convert both ways for ES256 and Ed25519; malformed ones are refused", arguments: SigningAlgorithm.allCases)
    func coseKeys(_ algorithm: SigningAlgorithm) throws {
        let key = try SigningKey.generate(algorithm).publicKey
        let cose = try COSEKey(key)
        let parsed = try COSEKey(encoded: cose.encoded)
        #expect(parsed.verifyingKey == key && parsed.algorithm == algorithm)
        #expect(cose.cbor[3]?.intValue == algorithm.coseIdentifier)

        func variant(_ change: (inout [CBOR.Entry]) -> Void) -> CBOR {
            var entries = cose.cbor.mapEntries ?? []
            change(&entries)
            return .map(entries)
        }
        let malformed: [(String, CBOR)] = [
            ("not a map", .array([])),
            ("missing x", variant { $0.removeAll { $0.key == .integer(-2) } }),
            ("short x", variant { $0 = $0.map { $0.key == .integer(-2) ? .init($0.key, .bytes(Data(count: 31))) : $0 } }),
            ("private key", variant { $0.append(.init(.integer(-4), .bytes(Data(count: 32)))) }),
            ("x as text", variant { $0 = $0.map { $0.key == .integer(-2) ? .init($0.key, .text("x")) : $0 } }),
        ]
        for (name, item) in malformed {
            #expect(throws: WebAuthnError.malformedCOSEKey(reason: ""), "\(name)") { try COSEKey(cbor: item) }
        }
        #expect(throws: WebAuthnError.unsupportedAlgorithm(reason: "")) {
            try COSEKey(cbor: variant { $0 = $0.map { $0.key == .integer(3) ? .init($0.key, .integer(-257)) : $0 } })
        }
        if algorithm == .es256 {
            #expect(throws: WebAuthnError.malformedCOSEKey(reason: "")) {
                try COSEKey(cbor: variant { $0 = $0.map { $0.key == .integer(-3) ? .init($0.key, .bytes(Data(count: 32))) : $0 } })
            }
        }
    }

    @Test("authenticator data round trips; truncated, leftover and inconsistent data is refused")
    func authenticatorData() throws {
        let key = try COSEKey(SigningKey.generate(.es256).publicKey)
        let attested = AuthenticatorData.AttestedCredentialData(aaguid: Data(count: 16), credentialID: Data(repeating: 5, count: 32), credentialPublicKey: key)
        let built = try AuthenticatorData(rpIDHash: Data(count: 32), flags: [.userPresent, .userVerified], signCount: 0x01020304, attestedCredentialData: attested)
        let parsed = try AuthenticatorData(bytes: built.bytes)
        #expect(parsed == built && parsed.signCount == 0x01020304 && parsed.flags.contains(.attestedCredentialData))
        let withExtensions = try AuthenticatorData(rpIDHash: Data(count: 32), flags: .userPresent, signCount: 1, extensions: .map([.init(.text("credProtect"), .unsigned(1))]))
        #expect(try AuthenticatorData(bytes: withExtensions.bytes).extensions != nil)

        var longID = built.bytes
        longID.replaceSubrange(53..<55, with: [0x04, 0x00])  // 1024
        let cases: [(String, Data, WebAuthnError.Code)] = [
            ("short", Data(count: 36), .malformedAuthenticatorData),
            ("leftover", built.bytes + [0], .malformedAuthenticatorData),
            ("leftover without AT", Data(count: 37) + [0], .malformedAuthenticatorData),
            ("AT without data", Data(count: 32) + [0x41, 0, 0, 0, 0], .malformedAuthenticatorData),
            ("truncated key", built.bytes.dropLast(3), .malformedAuthenticatorData),
            ("ED without extensions", Data(count: 32) + [0x81, 0, 0, 0, 0], .malformedAuthenticatorData),
            ("credential ID over 1023", longID, .credentialIDTooLong),
        ]
        for (name, bytes, code) in cases {
            #expect(throws: WebAuthnError(code: code, reason: ""), "\(name)") { try AuthenticatorData(bytes: bytes) }
        }
    }

    @Test("client data JSON is byte-exact per §5.8.1.1, escapes included")
    func clientData() throws {
        let simple = CollectedClientData(type: "webauthn.get", challenge: Data([0xFB, 0xFF]), origin: "https://example.org")
        #expect(String(decoding: simple.serialized(), as: UTF8.self)
            == #"{"type":"webauthn.get","challenge":"-_8","origin":"https://example.org","crossOrigin":false}"#)
        let odd = CollectedClientData(type: "webauthn.create", challenge: Data(), origin: "https://a\"b\\c\u{01}é")
        #expect(String(decoding: odd.serialized(), as: UTF8.self)
            == "{\"type\":\"webauthn.create\",\"challenge\":\"\",\"origin\":\"https://a\\\"b\\\\c\\u0001é\",\"crossOrigin\":false}")
        #expect(try CollectedClientData(json: odd.serialized()) == odd)
        for bad in ["[]", "{}", #"{"type":"webauthn.get","challenge":"a=","origin":"x"}"#, #"{"type":1,"challenge":"","origin":"x"}"#, "not json"] {
            #expect(throws: WebAuthnError.malformedClientData(reason: ""), "\(bad)") { try CollectedClientData(json: Data(bad.utf8)) }
        }
        #expect(throws: WebAuthnError.malformedClientData(reason: "")) { try CollectedClientData(json: Data(count: 20_000)) }
    }
}
