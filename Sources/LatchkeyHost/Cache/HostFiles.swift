#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import Glibc

/// The file operations of the host daemon's state: bounded reads that follow no symbolic
/// link, and whole-file replacement that a crash cannot leave half done.
enum HostFiles {
    /// The bytes of `path`, at most `maximumSize` (a larger file is refused).
    static func read(_ path: String, maximumSize: Int) throws -> Data {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw HostError(.system, "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        guard let data = FileDescriptorIO.read(descriptor, upTo: maximumSize + 1) else {
            throw HostError(.system, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        guard data.count <= maximumSize else { throw HostError(.cache, "\(path) is over \(maximumSize) bytes") }
        return data
    }

    /// Replaces `file` with `data`: written to a new file beside it, synced, renamed over
    /// it, and the folder synced, so a reader sees the old bytes or the new, never a mix.
    static func replace(_ file: URL, with data: Data, mode: mode_t) throws {
        let temporary = file.path + ".new"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw HostError(.system, "cannot make \(temporary): \(String(cString: strerror(errno)))") }
        var failure: String?
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { failure = String(cString: strerror(errno)); return }
                offset += written
            }
        }
        if failure == nil, fchmod(descriptor, mode) != 0 || fsync(descriptor) != 0 { failure = String(cString: strerror(errno)) }
        close(descriptor)
        if failure == nil, rename(temporary, file.path) != 0 { failure = String(cString: strerror(errno)) }
        if let failure {
            unlink(temporary)
            throw HostError(.system, "cannot write \(file.path): \(failure)")
        }
        try syncFolder(file.deletingLastPathComponent())
    }

    /// fsync(2) of a folder, so a rename in it survives a crash.
    static func syncFolder(_ folder: URL) throws {
        let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw HostError(.system, "cannot open \(folder.path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw HostError(.system, "cannot sync \(folder.path): \(String(cString: strerror(errno)))") }
    }

    /// Makes `folder` (and its parents) when missing, then requires it to be a directory
    /// of root's (or this process's user) that no one else may write.
    static func prepareFolder(_ folder: String, mode: mode_t) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: Int(mode)])
        var status = stat()
        guard lstat(folder, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw HostError(.system, "\(folder) is not a directory")
        }
        guard status.st_uid == 0 || status.st_uid == getuid(), status.st_mode & 0o022 == 0 else {
            throw HostError(.system, "\(folder) may be written by others than its owner, or is not root's; fix its owner and mode (0755 or tighter)")
        }
    }
}
