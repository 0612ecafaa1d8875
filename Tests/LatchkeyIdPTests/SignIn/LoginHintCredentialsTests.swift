import Foundation
import LatchkeyCrypto
@testable import LatchkeyIdP
import Testing

/// The decoys a `login_hint` is answered with (docs/SECURITY.md, "Limits": enumeration)
/// are the HMACs the design names, whichever way the key is prepared: a provider that
/// changed them would show every name's list moving at an upgrade.
@Suite("Login hint decoys")
struct LoginHintCredentialsTests {
    /// The `index`th decoy as the design states it, with one-shot HMACs.
    static func expectedDecoy(_ hint: String, _ index: Int, _ key: SymmetricKey) throws -> Data {
        let label = "login_hint:\(Username.key(hint)):\(index)"
        var bytes = try HMAC.authenticationCode(for: Data((label + ":0").utf8), using: key)
        let length = LoginHintCredentials.decoyLengths[Int(bytes[bytes.startIndex]) % LoginHintCredentials.decoyLengths.count]
        var block = 1
        while bytes.count < length {
            bytes += try HMAC.authenticationCode(for: Data((label + ":\(block)").utf8), using: key)
            block += 1
        }
        return Data(bytes.prefix(length))
    }

    @Test("sixteen decoys of the normalised name, equal to one-shot HMACs under the key; live IDs take decoys' places")
    func decoysAreTheDesignsHMACs() throws {
        let key = SymmetricKey(data: Data((0..<32).map { UInt8($0) }))
        let prepared = try HMAC.PreparedKey(key)
        for hint in ["nobody", "ＮＯＢＯＤＹ", "Ada Lovelace", "ǅ\u{0301}"] {
            let expected = try (0..<LoginHintCredentials.count).map { try Self.expectedDecoy(hint, $0, key) }
            let listed = try LoginHintCredentials.list(name: Username.key(hint), live: [], key: prepared)
            #expect(listed == expected.sorted { $0.lexicographicallyPrecedes($1) }, "\(hint)")
            #expect(try LoginHintCredentials.list(name: Username.key(hint), live: [], key: prepared) == listed, "\(hint): stable")
            let live = [Data(repeating: 7, count: 32), Data(repeating: 9, count: 16)]
            let mixed = try LoginHintCredentials.list(name: Username.key(hint), live: live, key: prepared)
            #expect(mixed.count == LoginHintCredentials.count)
            #expect(Set(mixed) == Set(live + expected.prefix(LoginHintCredentials.count - live.count)), "\(hint): live IDs first, then decoys")
        }
    }
}
