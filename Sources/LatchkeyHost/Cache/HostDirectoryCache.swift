#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import LatchkeyCrypto

/// The host's copy of its directory on disk (`/var/lib/latchkey/host/` by default), what
/// lookups are answered from when the provider cannot be reached (docs/ARCHITECTURE.md,
/// "A host's directory").
///
/// Two files, each `LATCHKEY-HOST-CACHE/1 <HMAC-SHA256, base64url>` on a line, then JSON:
/// - `directory.cache`: the screened directory and when it was read;
/// - `confirmed.cache`: the version the provider last confirmed and when (a `304` rewrites
///   only this small file, not the directory).
///
/// Each is written whole to a new file, synced, renamed over the old one and the folder
/// synced, so a crash (a SIGKILL mid-write included) leaves the old file or the new one,
/// never a mix. The HMAC, under `cache.key` (32 random bytes, root's alone, made once),
/// covers the file's kind and its JSON: a file cut short, edited, or one file put in the
/// other's place is refused, and the daemon syncs anew.
struct HostDirectoryCache: Sendable {
    let folder: URL

    static let magic = "LATCHKEY-HOST-CACHE/1"
    /// The largest file read: a directory of a million accounts fits.
    static let maximumSize = 256 << 20

    struct Snapshot: Codable, Sendable, Equatable {
        var directory: HostDirectory
        /// When it was read from the provider, in seconds since 1970.
        var fetchedAt: Int64
    }

    struct Confirmation: Codable, Sendable, Equatable {
        var version: String
        /// When the provider last said this version is current, in seconds since 1970.
        var confirmedAt: Int64
    }

    var directoryFile: URL { folder.appendingPathComponent("directory.cache") }
    var confirmationFile: URL { folder.appendingPathComponent("confirmed.cache") }
    var keyFile: URL { folder.appendingPathComponent("cache.key") }

    /// The cache key, made the first time.
    func key() throws -> SymmetricKey {
        let path = keyFile.path
        let made = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if made >= 0 {
            defer { close(made) }
            let bytes = try SecureRandom.bytes(count: 32)
            let written = bytes.withUnsafeBytes { Glibc.write(made, $0.baseAddress, $0.count) }
            guard written == 32, fsync(made) == 0 else {
                unlink(path)
                throw HostError(.system, "cannot write \(path): \(String(cString: strerror(errno)))")
            }
            try HostFiles.syncFolder(folder)
            return SymmetricKey(data: bytes)
        }
        guard errno == EEXIST else { throw HostError(.system, "cannot make \(path): \(String(cString: strerror(errno)))") }
        let data = try HostFiles.read(path, maximumSize: 64)
        guard data.count == 32 else { throw HostError(.cache, "\(path) is not 32 bytes; remove it and the cache files to start anew") }
        return SymmetricKey(data: data)
    }

    func readSnapshot(key: SymmetricKey) throws -> Snapshot? {
        try read(directoryFile, kind: "directory", key: key)
    }

    func readConfirmation(key: SymmetricKey) throws -> Confirmation? {
        try read(confirmationFile, kind: "confirmed", key: key)
    }

    func write(_ snapshot: Snapshot, key: SymmetricKey) throws {
        try write(snapshot, to: directoryFile, kind: "directory", key: key)
    }

    func write(_ confirmation: Confirmation, key: SymmetricKey) throws {
        try write(confirmation, to: confirmationFile, kind: "confirmed", key: key)
    }

    private func read<T: Decodable>(_ file: URL, kind: String, key: SymmetricKey) throws -> T? {
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        let data = try HostFiles.read(file.path, maximumSize: Self.maximumSize)
        guard let newline = data.firstIndex(of: 0x0A) else { throw HostError(.cache, "\(file.path) is cut short") }
        let header = String(decoding: data[data.startIndex..<newline], as: UTF8.self).split(separator: " ")
        let body = data[data.index(after: newline)...]
        guard header.count == 2, header[0] == Self.magic, header[1].utf8.count <= 64, let code = try? Base64URL.decode(header[1]),
              HMAC.isValidAuthenticationCode(code, for: Data(kind.utf8) + [0x0A] + body, using: key)
        else { throw HostError(.cache, "\(file.path) does not carry its authentication code: cut short or edited") }
        do {
            return try JSONDecoder().decode(T.self, from: body)
        } catch {
            throw HostError(.cache, "\(file.path) does not parse", underlying: error)
        }
    }

    private func write(_ value: some Encodable, to file: URL, kind: String, key: SymmetricKey) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = try encoder.encode(value)
        let code = try HMAC.authenticationCode(for: Data(kind.utf8) + [0x0A] + body, using: key)
        try HostFiles.replace(file, with: Data("\(Self.magic) \(Base64URL.encode(code))\n".utf8) + body, mode: 0o600)
    }
}
