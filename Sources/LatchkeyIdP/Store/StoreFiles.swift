import Foundation
// `stat`'s members: in this target the C header is first seen through CDispatch, the
// clang module under Dispatch, which MemberImportVisibility then asks to be imported.
import CDispatch

/// The provider's data directory (`serve --data-dir`): the SQLite database and the
/// store key live there, and both are refused when others can reach them, as the key
/// vault refuses its own (docs/SECURITY.md, "The provider's store").
enum StoreFiles {
    static let databaseName = "latchkey.sqlite3"
    static let storeKeyName = "store.key"
    /// What versions before the database kept, imported once into a new database (``LegacySnapshotImport``).
    static let legacyStateName = "state.json"
    static let legacySigningKeyName = "signing-key.pem"

    /// Creates `directory` 0700 when missing and checks its mode; creates the database
    /// file 0600 when missing (before SQLite does, which would honour the umask) and
    /// checks its mode. Returns the database's path.
    static func prepareDatabaseFile(in directory: URL) throws -> String {
        try prepareDirectory(directory)
        let path = directory.appendingPathComponent(databaseName).path
        let descriptor = Foundation.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw StoreError.engineFailure("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        try checkMode(of: descriptor, path: path, allowed: 0o600)
        return path
    }

    /// Creates `directory` 0700 when missing and refuses it when group or others can use it.
    static func prepareDirectory(_ directory: URL) throws {
        let path = directory.path
        if mkdir(path, 0o700) != 0, errno != EEXIST {
            throw StoreError.engineFailure("cannot create the data directory \(path): \(String(cString: strerror(errno)))")
        }
        let descriptor = Foundation.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            throw StoreError.engineFailure("cannot open the data directory \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        try checkMode(of: descriptor, path: path, allowed: 0o700)
    }

    /// Refuses a file or directory with any permission bit outside `allowed`.
    static func checkMode(of descriptor: Int32, path: String, allowed: mode_t) throws {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw StoreError.engineFailure("cannot read the mode of \(path): \(String(cString: strerror(errno)))")
        }
        let mode = status.st_mode & 0o777
        guard mode & ~allowed == 0 else {
            throw StoreError.unsafePermissions("\(path) has mode \(String(mode, radix: 8)); others may read or change it. Check who did, then chmod \(String(allowed, radix: 8)) it")
        }
        guard status.st_uid == geteuid() else {
            throw StoreError.unsafePermissions("\(path) belongs to another user (uid \(status.st_uid))")
        }
    }

    /// The 32-byte key in `path`, which must be 0600 (or 0400) and hold exactly 32 bytes.
    static func readKey(at path: String) throws -> Data {
        let descriptor = Foundation.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw StoreError.keyUnavailable("cannot read the store key \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        try checkMode(of: descriptor, path: path, allowed: 0o600)
        var bytes = [UInt8](repeating: 0, count: 33)
        let count = read(descriptor, &bytes, 33)
        guard count == 32 else {
            throw StoreError.keyUnavailable("the store key \(path) must hold exactly 32 bytes (head -c 32 /dev/urandom)")
        }
        return Data(bytes.prefix(32))
    }

    /// Makes a random 32-byte key at `path`, 0600, unless one is there.
    static func createKey(at path: String, bytes: Data) throws {
        let descriptor = Foundation.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw StoreError.keyUnavailable("cannot create the store key \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(descriptor) == 0 else {
            unlink(path)
            throw StoreError.keyUnavailable("cannot write the store key \(path): \(String(cString: strerror(errno)))")
        }
    }
}
