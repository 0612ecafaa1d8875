public import Foundation

/// The admin token `serve` made itself, kept in the data directory (`admin-token`, 0600)
/// when the operator supplied none (docs/SECURITY.md, "The reference provider"). It is
/// never printed to a log or a pipe: the ready line names this file instead, and a
/// restart on the same directory reads the same token back.
public enum AdminTokenFile {
    public static let name = "admin-token"

    /// The token kept in `directory` (made 0700 when missing, refused when others can
    /// reach it), or, when there is none yet, `make()`'s, written there once (0600,
    /// never over an existing file or through a link). `created` tells which.
    public static func loadOrCreate(in directory: URL, make: () throws -> String) throws -> (token: String, path: String, created: Bool) {
        try StoreFiles.prepareDirectory(directory)
        let path = directory.appendingPathComponent(name).path
        let existing = Foundation.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if existing >= 0 {
            defer { close(existing) }
            try StoreFiles.checkMode(of: existing, path: path, allowed: 0o600)
            var bytes = [UInt8](repeating: 0, count: 1025)
            let count = read(existing, &bytes, bytes.count)
            let token = String(decoding: bytes.prefix(max(count, 0)), as: UTF8.self).trimmingCharacters(in: .newlines)
            guard count > 0, count <= 1024, !token.isEmpty else {
                throw StoreError.keyUnavailable("\(path) holds no admin token; remove it to have a new one made")
            }
            return (token, path, false)
        }
        guard errno == ENOENT else {
            throw StoreError.keyUnavailable("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        let token = try make()
        let descriptor = Foundation.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw StoreError.keyUnavailable("cannot create \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let bytes = Data((token + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(descriptor) == 0 else {
            unlink(path)
            throw StoreError.keyUnavailable("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        return (token, path, true)
    }
}
