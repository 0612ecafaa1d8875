import Foundation
import LatchkeyCrypto
@testable import LatchkeyWebAuthn
import Testing

/// `CredentialMetadata`'s own JSON reader and writer against `Codable`'s, which wrote
/// every record before them: each reads what the other writes, to the same value.
@Suite("Credential metadata in the vault")
struct CredentialMetadataTests {
    private static func codableEncoded(_ metadata: CredentialMetadata) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        return try encoder.encode(metadata)
    }

    private static func codableDecoded(_ data: Data) throws -> CredentialMetadata {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode(CredentialMetadata.self, from: data)
    }

    static let samples: [CredentialMetadata] = {
        var plain = CredentialMetadata(
            credentialID: Data((0..<32).map(UInt8.init)), rpID: "example.com", userHandle: Data([0xFF, 0x00, 0x7F]),
            userName: "alice", userDisplayName: "Alice", createdAt: Date(timeIntervalSince1970: 1_796_000_000.123456)
        )
        var used = plain
        used.signCount = .max
        used.lastUsedAt = Date(timeIntervalSince1970: 1_796_086_400.987654321)
        used.attributes = ["issuer": "https://idp.example/", "a\"b\\c": "\u{0}\u{1B}[2J", "é€😀": "\u{202E}evil\u{202C}", "B": "", "a": "/"]
        used.userName = "bob\"\\\u{7}"
        used.userDisplayName = "Bob </script> \u{1F}"
        plain.signCount = 7
        var empty = CredentialMetadata(credentialID: Data(), rpID: "", userHandle: Data(), userName: "", userDisplayName: "", createdAt: Date(timeIntervalSince1970: 0))
        empty.lastUsedAt = Date(timeIntervalSince1970: -1.5)
        return [plain, used, empty]
    }()

    @Test("each reads back what the other writes, equal to the value written")
    func roundTrips() throws {
        for metadata in Self.samples {
            #expect(CredentialMetadata.decode(try Self.codableEncoded(metadata)) == metadata)
            #expect(try Self.codableDecoded(try metadata.encoded()) == metadata)
            #expect(CredentialMetadata.decode(try metadata.encoded()) == metadata)
        }
    }

    @Test("what JSONDecoder refuses is no credential: another kind, a member missing or of the wrong kind, a counter out of range")
    func refusals() throws {
        let valid = try #require(String(data: try Self.samples[0].encoded(), encoding: .utf8))
        let broken = [
            valid.replacingOccurrences(of: #""kind":"webauthn""#, with: #""kind":"dpop""#),
            valid.replacingOccurrences(of: #""rpID":"example.com","#, with: ""),
            valid.replacingOccurrences(of: #""signCount":7"#, with: #""signCount":-1"#),
            valid.replacingOccurrences(of: #""signCount":7"#, with: #""signCount":4294967296"#),
            valid.replacingOccurrences(of: #""signCount":7"#, with: #""signCount":7.5"#),
            valid.replacingOccurrences(of: #""signCount":7"#, with: #""signCount":"7""#),
            valid.replacingOccurrences(of: #""attributes":{}"#, with: #""attributes":{"a":1}"#),
            valid.replacingOccurrences(of: #""createdAt":"#, with: #""createdAt":1e400,"x":"#),
            valid.replacingOccurrences(of: #""userHandle":""#, with: #""userHandle":"!"#),
            "[]", "", "{",
        ]
        for text in broken {
            #expect(text != valid)
            #expect(CredentialMetadata.decode(Data(text.utf8)) == nil, "\(text)")
            // The kind is checked after decoding, on both paths.
            #expect((try? Self.codableDecoded(Data(text.utf8)))?.kind ?? "" != CredentialMetadata.kind, "JSONDecoder took \(text)")
        }
        // A member a later version adds is ignored by both, a whole-number counter spelled
        // with a fraction read by both; a name given twice only this reader refuses.
        let added = valid.replacingOccurrences(of: #""kind":"webauthn""#, with: #""kind":"webauthn","later":{"x":[1,true,null]}"#)
        #expect(CredentialMetadata.decode(Data(added.utf8)) == Self.samples[0])
        #expect(try Self.codableDecoded(Data(added.utf8)) == Self.samples[0])
        let fraction = valid.replacingOccurrences(of: #""signCount":7"#, with: #""signCount":7.0"#)
        #expect(CredentialMetadata.decode(Data(fraction.utf8))?.signCount == 7)
        let twice = valid.replacingOccurrences(of: #""kind":"webauthn""#, with: #""kind":"webauthn","rpID":"attacker.example""#)
        #expect(CredentialMetadata.decode(Data(twice.utf8)) == nil)
    }
}
