public import Foundation
import LatchkeyCrypto

/// A private (0700) temporary directory for one test, removed when the value goes, with
/// the key files a vault is opened with.
public final class TemporaryDirectory: Sendable {
    public let url: URL

    public init() throws {
        let base = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("latchkey-test-XXXXXX")
        var template = Array(base.standardizedFileURL.path.utf8CString)
        guard let made = mkdtemp(&template) else { throw TestSupportError("mkdtemp failed: \(String(cString: strerror(errno)))") }
        url = URL(fileURLWithPath: String(cString: made))
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// `vault` inside the directory, where a test keeps its vault.
    public var vault: URL { url.appendingPathComponent("vault") }

    /// A file in the directory; `bytes` default to a fresh 32-byte key, the mode to
    /// owner-only, as a vault's key file must be.
    @discardableResult
    public func keyFile(_ name: String = "vault.key", bytes: Data? = nil, mode: mode_t = 0o600) throws -> URL {
        let file = url.appendingPathComponent(name)
        let contents = try bytes ?? SecureRandom.bytes(count: 32)
        guard FileManager.default.createFile(atPath: file.path, contents: contents) else {
            throw TestSupportError("cannot write \(file.path)")
        }
        guard chmod(file.path, mode) == 0 else { throw TestSupportError("cannot chmod \(file.path)") }
        return file
    }

    /// A subdirectory, created 0700.
    public func subdirectory(_ name: String) throws -> URL {
        let directory = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return directory
    }
}
