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
