import Foundation
@testable import LatchkeyCrypto
import LatchkeyTestSupport

enum VaultFixtures {
    /// scrypt cheap enough for tests; real vaults use `.interactive`.
    static let cheapScrypt = Scrypt.Parameters(costFactor: 1 << 10, blockSize: 8, parallelism: 1)

    static func passphrase(_ text: String = "correct horse battery staple") -> VaultKeySource {
        .passphrase(text, scrypt: cheapScrypt)
    }

    static func recordPath(_ vault: KeyVault, _ handle: KeyHandle) -> String {
        vault.directory.path + "/keys/\(handle.rawValue).json"
    }

    /// A record's bytes with one character of its sealed details changed (the result is
    /// still base64url, so only the seal and the MAC can tell).
    static func editingDetails(_ record: Data) -> Data {
        var text = Array(String(decoding: record, as: UTF8.self))
        guard let start = String(text).range(of: "\"details\":\"") else { return record }
        let index = String(text).distance(from: String(text).startIndex, to: start.upperBound) + 20
        text[index] = text[index] == "A" ? "B" : "A"
        return Data(String(text).utf8)
    }

    /// Every regular file under `directory`, recursively.
    static func allFiles(under directory: URL) -> [URL] {
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { return [] }
        return walker.compactMap { $0 as? URL }.filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true }
    }
}

extension Data {
    func contains(_ needle: Data) -> Bool {
        !needle.isEmpty && range(of: needle) != nil
    }
}
