#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The POSIX file operations the vault is built on, each with the property the vault
/// relies on spelled out: owner-only permissions, no following of symbolic links, atomic
/// and durable replacement, and one writer at a time across processes.
enum VaultFiles {
    /// Owner read/write only.
    static let fileMode: mode_t = 0o600
    /// Owner only.
    static let directoryMode: mode_t = 0o700
    /// Temporary files start with this, so no listing can mistake one for a record.
    static let temporaryPrefix = ".tmp-"

    static func errnoText() -> String {
        String(cString: strerror(errno))
    }

    static func failure(_ action: String, _ path: String) -> KeyVaultError {
        KeyVaultError.fileSystem(reason: "cannot \(action) \(path): \(errnoText())")
    }

    /// A swift-system failure (`Errno`, thrown after retrying `EINTR`) as a vault error.
    static func failure(_ action: String, _ path: String, _ error: any Error) -> KeyVaultError {
        let reason = (error as? Errno).map { String(cString: strerror($0.rawValue)) } ?? "\(error)"
        return KeyVaultError.fileSystem(reason: "cannot \(action) \(path): \(reason)")
    }

    /// Throws unless `status` belongs to this user and grants nothing to group or others.
    static func checkPrivate(_ status: stat, path: String, isDirectory: Bool) throws {
        guard status.st_uid == geteuid() else {
            throw KeyVaultError.insecurePermissions(reason: "\(path) belongs to another user (uid \(status.st_uid)); a vault must be owned by the user that opens it"
            )
        }
        guard status.st_mode & 0o077 == 0 else {
            let mode = String(status.st_mode & 0o777, radix: 8)
            let fix = isDirectory ? "chmod 700 \(path)" : "chmod 600 \(path)"
            throw KeyVaultError.insecurePermissions(reason: "\(path) is accessible by group or others (mode \(mode)); fix it with: \(fix)"
            )
        }
    }

    /// `lstat` of a path; nil when it does not exist.
    static func status(_ path: String) throws -> stat? {
        var status = stat()
        if lstat(path, &status) == 0 { return status }
        if errno == ENOENT { return nil }
        throw failure("inspect", path)
    }

    /// Makes `path` a private directory if missing, then checks it is a private directory.
    /// A symbolic link is followed for the vault's own directory (a data directory may be
    /// linked elsewhere) but never inside it.
    static func ensurePrivateDirectory(_ path: String, followLink: Bool) throws {
        if mkdir(path, directoryMode) != 0, errno != EEXIST {
            throw failure("create the directory", path)
        }
        var status = stat()
        let result = followLink ? stat(path, &status) : lstat(path, &status)
        guard result == 0 else { throw failure("inspect", path) }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw KeyVaultError.notAVault(reason: "\(path) is not a directory")
        }
        try checkPrivate(status, path: path, isDirectory: true)
    }

    /// Reads a whole regular file: no symbolic links, at most `maximumSize` bytes, and (when
    /// asked) owner-only permissions checked on the open file itself.
    ///
    /// With `directory` (an open directory descriptor), `path` is opened relative to it
    /// (`openat`), which spares the kernel a full path walk per file in a listing.
    static func readFile(
        _ path: String,
        in directory: Int32? = nil,
        name: String? = nil,
        maximumSize: Int,
        requirePrivate: Bool = true,
        missing: KeyVaultError.Code = .keyNotFound
    ) throws -> Data {
        // O_NOATIME, so reading a record (a listing, a sign-in) does not date it either;
        // the kernel allows it to the file's owner only, so others' files open without it.
        let flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC
        func openFile(_ flags: Int32) -> Int32 {
            if let directory, let name { openat(directory, name, flags) } else { open(path, flags) }
        }
        var descriptor = openFile(flags | Self.noAccessTime)
        if descriptor < 0, errno == EPERM { descriptor = openFile(flags) }
        guard descriptor >= 0 else {
            if errno == ENOENT { throw KeyVaultError(code: missing, reason: "\(path) does not exist") }
            if errno == ELOOP { throw KeyVaultError.insecurePermissions(reason: "\(path) is a symbolic link; the vault refuses to follow links") }
            throw failure("open", path)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw failure("inspect", path) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw KeyVaultError.corruptRecord(reason: "\(path) is not a regular file")
        }
        if requirePrivate { try checkPrivate(status, path: path, isDirectory: false) }
        guard Int(status.st_size) <= maximumSize else {
            throw KeyVaultError.corruptRecord(reason: "\(path) is \(status.st_size) bytes, over the \(maximumSize)-byte limit")
        }
        var data = Data(count: Int(status.st_size) + 1)
        var total = 0
        let file = FileDescriptor(rawValue: descriptor)
        try data.withUnsafeMutableBytes { buffer in
            while total < buffer.count {
                // swift-system retries EINTR.
                let count: Int
                do {
                    count = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]))
                } catch {
                    throw failure("read", path, error)
                }
                total += count
                // A short read of a regular file is its end; this saves the extra read
                // that would return 0.
                if count == 0 || total < buffer.count { break }
            }
        }
        guard total <= maximumSize else {
            throw KeyVaultError.corruptRecord(reason: "\(path) grew past the \(maximumSize)-byte limit while being read")
        }
        data.removeSubrange(total...)
        return data
    }

    /// Replaces `path` with `data` atomically and durably: a private temporary file in the
    /// same directory, written and `fsync`ed, renamed over the target, then the directory
    /// `fsync`ed so the rename itself survives a crash. At every instant the target is
    /// either the old file or the new one, whole.
    static func writeAtomically(_ data: Data, to path: String, directory: String) throws {
        let temporary = directory + "/" + temporaryPrefix + (try KeyHandle.random().rawValue)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, fileMode)
        guard descriptor >= 0 else { throw failure("create", temporary) }
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        do {
            defer { close(descriptor) }
            do {
                // Every byte, across short writes and EINTR.
                _ = try data.withUnsafeBytes { try FileDescriptor(rawValue: descriptor).writeAll($0) }
            } catch {
                throw failure("write", temporary, error)
            }
            // The file's times say nothing: a record written at each sign-in (its counter)
            // would otherwise date every use to anyone holding a copy of the vault.
            guard futimens(descriptor, Self.epochTimes) == 0 else { throw failure("set the times of", temporary) }
            guard fsync(descriptor) == 0 else { throw failure("flush", temporary) }
        }
        guard rename(temporary, path) == 0 else { throw failure("rename into place", path) }
        renamed = true
        // The rename dated the directory; it is set back too (best effort: another writer
        // may date it again, and the next write sets it back).
        _ = utimensat(AT_FDCWD, directory, Self.epochTimes, 0)
        try syncDirectory(directory)
    }

    /// `O_NOATIME` (Linux, `<fcntl.h>` with `_GNU_SOURCE`, which Swift's Glibc module does
    /// not expose): reads leave the access time alone.
    private static let noAccessTime: Int32 = 0o1000000

    /// Access and modification times of 1970-01-01T00:00:00Z, for `futimens`/`utimensat`.
    private static let epochTimes = [timespec(tv_sec: 0, tv_nsec: 0), timespec(tv_sec: 0, tv_nsec: 0)]

    /// Removes `path` durably; false when it did not exist.
    static func remove(_ path: String, directory: String) throws -> Bool {
        guard unlink(path) == 0 else {
            if errno == ENOENT { return false }
            throw failure("remove", path)
        }
        _ = utimensat(AT_FDCWD, directory, Self.epochTimes, 0)
        try syncDirectory(directory)
        return true
    }

    /// Runs `body` with a descriptor for `directory`, for ``readFile(_:in:name:maximumSize:requirePrivate:missing:)``.
    static func withDirectory<R>(_ directory: String, _ body: (Int32) throws -> R) throws -> R {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("open the directory", directory) }
        defer { close(descriptor) }
        return try body(descriptor)
    }

    /// `fsync` of a directory, which makes renames and unlinks in it durable.
    static func syncDirectory(_ directory: String) throws {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("open the directory", directory) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw failure("flush the directory", directory) }
    }

    /// Runs `body` holding an exclusive `flock` on `lockPath`. Each call opens the lock
    /// file anew, so threads of one process exclude each other as processes do; the lock
    /// goes with the descriptor, so a killed writer never leaves it held.
    static func withExclusiveLock<R>(_ lockPath: String, _ body: () throws -> R) throws -> R {
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, fileMode)
        guard descriptor >= 0 else { throw failure("open the lock file", lockPath) }
        defer { close(descriptor) }
        // Created on first use: its times would date the vault (best effort, like the
        // directory's).
        _ = futimens(descriptor, Self.epochTimes)
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw failure("lock", lockPath) }
        }
        return try body()
    }

    /// Takes an exclusive `flock` on `lockPath` without waiting: the open descriptor that
    /// holds it (close it to release), or nil when another descriptor holds it.
    static func tryExclusiveLock(_ lockPath: String) throws -> Int32? {
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, fileMode)
        guard descriptor >= 0 else { throw failure("open the lock file", lockPath) }
        _ = futimens(descriptor, Self.epochTimes)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let error = errno
            guard error == EINTR else {
                close(descriptor)
                if error == EWOULDBLOCK { return nil }
                errno = error
                throw failure("lock", lockPath)
            }
        }
        return descriptor
    }

    /// The names in a directory (not `.` and `..`).
    static func names(in directory: String) throws -> [String] {
        guard let stream = opendir(directory) else { throw failure("list", directory) }
        defer { closedir(stream) }
        // The name is read in place, up to its NUL. Copying `entry.pointee.d_name` (a
        // 256-byte tuple) read past the end of a short last record in glibc's buffer, which
        // AddressSanitizer reported as a heap overflow.
        guard let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name) else { throw failure("list", directory) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self))
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
