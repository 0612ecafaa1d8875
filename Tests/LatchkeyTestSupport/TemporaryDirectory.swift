public import Foundation
import LatchkeyCrypto

/// A private (0700) temporary directory for one test, removed when the value goes, with
/// the key files a vault is opened with.
public final class TemporaryDirectory: Sendable {
    public let url: URL

    /// A new directory in `$TMPDIR`. `reachableByOtherUsers`: a test that runs a process as
    /// another user (`nobody`) needs a directory that user can reach, and `$TMPDIR` may be
    /// private (`.ci/run` makes it 0700, as pam_tmpdir and systemd's PrivateTmp do); then
    /// the directory is made in `/tmp`, which everyone can enter. Either way it starts 0700.
    public init(reachableByOtherUsers: Bool = false) throws {
        _ = TestEnvironment.openFileLimit
        var parent = URL(fileURLWithPath: NSTemporaryDirectory()).standardizedFileURL.path
        if reachableByOtherUsers, !Self.othersCanEnter(parent) {
            guard Self.othersCanEnter("/tmp") else {
                throw TestSupportError("neither $TMPDIR (\(parent)) nor /tmp can be entered by other users")
            }
            parent = "/tmp"
        }
        var template = Array((parent as NSString).appendingPathComponent("latchkey-test-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw TestSupportError("mkdtemp in \(parent) failed: \(String(cString: strerror(errno)))") }
        url = URL(fileURLWithPath: String(cString: made))
    }

    /// Whether every directory from `/` down to `path` lets others search it (o+x).
    static func othersCanEnter(_ path: String) -> Bool {
        var current = ""
        for component in ([""] + path.split(separator: "/").map(String.init)) {
            current = component.isEmpty ? "/" : (current as NSString).appendingPathComponent(component)
            let mode = (try? FileManager.default.attributesOfItem(atPath: current)[.posixPermissions] as? Int) ?? 0
            guard mode & 0o001 != 0 else { return false }
        }
        return true
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
