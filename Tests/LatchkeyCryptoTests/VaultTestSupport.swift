import Foundation
@testable import LatchkeyCrypto

/// A private temporary directory for one test, removed when the value goes.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        let base = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("latchkey-test-XXXXXX")
        var template = Array(base.standardizedFileURL.path.utf8CString)
        guard let made = mkdtemp(&template) else { throw TestDataError("mkdtemp failed") }
        url = URL(fileURLWithPath: String(cString: made))
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    var vault: URL { url.appendingPathComponent("vault") }

    /// A 32-byte key file with owner-only permissions.
    func keyFile(_ name: String = "vault.key", bytes: Data? = nil, mode: mode_t = 0o600) throws -> URL {
        let file = url.appendingPathComponent(name)
        let contents = try bytes ?? SecureRandom.bytes(count: 32)
        guard FileManager.default.createFile(atPath: file.path, contents: contents) else { throw TestDataError("cannot write \(file.path)") }
        chmod(file.path, mode)
        return file
    }
}

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
