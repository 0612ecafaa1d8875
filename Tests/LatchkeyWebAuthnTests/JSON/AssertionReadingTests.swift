import Foundation
import LatchkeyCrypto
@testable import LatchkeyWebAuthn
import Testing

/// `AuthenticationResponseJSON(json:)` reads with ``JSONReader`` what the `Codable` path
/// (`WebAuthnJSON.decode`) reads, member for member, and refuses what it refuses; on top it
/// refuses a member named twice. Likewise `CollectedClientData(json:)`.
@Suite("WebAuthn: the assertion and client data read without JSONDecoder")
struct AssertionReadingTests {
    static var valid: [String: Any] { [
        "id": "AQID", "rawId": "AQID", "type": "public-key", "authenticatorAttachment": "platform", "clientExtensionResults": [String: Any](),
        "response": ["clientDataJSON": "eyJ0eXBlIjoid2ViYXV0aG4uZ2V0In0", "authenticatorData": "AAAA", "signature": "MEUCIQ", "userHandle": "dXNlcg"] as [String: Any],
    ] }

    /// The valid response with one edit: a member removed (nil), replaced, or added.
    static func edited(_ path: [String], _ value: Any?) -> [String: Any] {
        var object = valid
        if path.count == 1 {
            object[path[0]] = value
        } else {
            var response = object["response"] as! [String: Any]
            response[path[1]] = value
            object["response"] = response
        }
        return object
    }

    static var cases: [[String: Any]] {
        var cases = [valid]
        let members: [[String]] = [["id"], ["rawId"], ["type"], ["authenticatorAttachment"], ["clientExtensionResults"], ["response"],
                                   ["response", "clientDataJSON"], ["response", "authenticatorData"], ["response", "signature"], ["response", "userHandle"]]
        let replacements: [Any?] = [nil, NSNull(), 7, true, "", "AQID", "AQI=", "+/8", "not base64!", [Any](), [String: Any](), ["a": 1]]
        for member in members {
            for replacement in replacements { cases.append(edited(member, replacement)) }
        }
        cases.append(edited(["extra"], "ignored"))
        cases.append(edited(["response", "extra"], ["nested": [1, 2]]))
        cases.append(edited(["response", "signature"], String(repeating: "A", count: 70_000)))
        return cases
    }

    @Test("for a valid response and 120 edits of it, both readers accept the same value or both refuse; clientExtensionResults must be an object, which the empty Decodable struct never checked")
    func sameAsCodable() throws {
        for object in Self.cases {
            let json = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            let read = Result { try AuthenticationResponseJSON(json: json) }
            let decoded = Result { try WebAuthnJSON.decode(AuthenticationResponseJSON.self, from: json) }
            if let extensions = object["clientExtensionResults"], !(extensions is [String: Any]) {
                #expect(throws: WebAuthnError.self, "\(String(decoding: json, as: UTF8.self))") { try read.get() }
                continue
            }
            switch (read, decoded) {
            case (.success(let a), .success(let b)): #expect(a == b, "\(String(decoding: json, as: UTF8.self))")
            case (.failure(let error), .failure):
                #expect((error as? WebAuthnError)?.code == .malformedJSON, "\(error)")
            default:
                Issue.record("the readers disagree on \(String(decoding: json, as: UTF8.self)): \(read), \(decoded)")
            }
        }
    }

    @Test("a member named twice, at the top or in the response, is refused; the message names what was missing or bad, never a value")
    func duplicatesAndMessages() throws {
        let twice = #"{"id":"AQID","rawId":"AQID","type":"public-key","clientExtensionResults":{},"response":{"clientDataJSON":"e30","authenticatorData":"AA","signature":"AA","signature":"AB"}}"#
        #expect(throws: WebAuthnError.self) { try AuthenticationResponseJSON(json: Data(twice.utf8)) }
        let topTwice = #"{"id":"AQID","id":"BQID","rawId":"AQID","type":"public-key","clientExtensionResults":{},"response":{"clientDataJSON":"e30","authenticatorData":"AA","signature":"AA"}}"#
        #expect(throws: WebAuthnError.self) { try AuthenticationResponseJSON(json: Data(topTwice.utf8)) }

        let missing = try JSONSerialization.data(withJSONObject: Self.edited(["response", "signature"], nil))
        let error = #expect(throws: WebAuthnError.self) { try AuthenticationResponseJSON(json: missing) }
        #expect(error?.reason == "not valid AuthenticationResponseJSON: missing response.signature", "\(String(describing: error))")
        let secret = try JSONSerialization.data(withJSONObject: Self.edited(["rawId"], "sEcReT!"))
        let bad = #expect(throws: WebAuthnError.self) { try AuthenticationResponseJSON(json: secret) }
        #expect(bad?.reason.contains("rawId") == true && bad?.reason.contains("sEcReT") == false, "\(String(describing: bad))")
        #expect(throws: WebAuthnError.self) { try AuthenticationResponseJSON(json: Data(repeating: 0x20, count: WebAuthnJSON.maximumSize + 1)) }
    }

    @Test("client data: the canonical form, added members and escapes read; a member twice, a non-boolean crossOrigin or non-string topOrigin refused")
    func clientData() throws {
        let canonical = CollectedClientData(type: CollectedClientData.getType, challenge: Data([1, 2, 3]), origin: "https://example.com", crossOrigin: false, topOrigin: nil)
        #expect(try CollectedClientData(json: canonical.serialized()) == canonical)
        let added = #"{"type":"webauthn.get","challenge":"AQID","origin":"https:\/\/example.com","crossOrigin":true,"topOrigin":"https://top.example","other_keys_can_be_added_here":"do not compare clientDataJSON against a template. See https://goo.gl/yabPex"}"#
        let read = try CollectedClientData(json: Data(added.utf8))
        #expect(read.origin == "https://example.com" && read.crossOrigin && read.topOrigin == "https://top.example" && read.challenge == Data([1, 2, 3]))
        for hostile in [
            #"{"type":"webauthn.get","challenge":"AQID","origin":"https://example.com","type":"webauthn.create"}"#,
            #"{"type":"webauthn.get","challenge":"AQID","origin":"https://example.com","crossOrigin":1}"#,
            #"{"type":"webauthn.get","challenge":"AQID","origin":"https://example.com","crossOrigin":null}"#,
            #"{"type":"webauthn.get","challenge":"AQID","origin":"https://example.com","topOrigin":null}"#,
            #"{"type":"webauthn.get","challenge":"AQID=","origin":"https://example.com"}"#,
            #"{"type":"webauthn.get","challenge":"AQID"}"#, #"["webauthn.get"]"#, "",
        ] {
            #expect(throws: WebAuthnError.self, "\(hostile)") { try CollectedClientData(json: Data(hostile.utf8)) }
        }
    }
}
