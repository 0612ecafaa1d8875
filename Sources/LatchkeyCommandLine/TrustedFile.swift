#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
// `struct stat`'s members are found through Dispatch's C module (MemberImportVisibility).
import CDispatch
import LatchkeyProtocol

/// A configuration file a command believes only when no one else could have written it:
/// `/etc/latchkey/pam.conf` and its vault key file (docs/SECURITY.md, "PAM"), the user's
/// `links.conf` (docs/SECURITY.md, "Links on a Linux desktop"). Whoever can write such a
/// file decides what the command trusts, so a file another user owns or may change is
/// refused, not read.
enum TrustedFile {
    /// `body` with the file opened (`O_NOFOLLOW`) and its size, once the file is found to
    /// be a regular file that root or whoever runs this owns and only its owner may
    /// change; `secret` ones readable by no one else either; at most `maximumSize` bytes.
    static func open<T>(_ path: String, what: String, secret: Bool, maximumSize: Int, _ body: (Int32, Int) throws -> T) throws -> T {
        let shown = path.displaySafe(maximumLength: 256)
        let descriptor = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw CommandFailure("cannot open \(what) \(shown): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw CommandFailure("\(what) \(shown) is not a regular file")
        }
        guard status.st_uid == 0 || status.st_uid == geteuid() else {
            throw CommandFailure("\(what) \(shown) is owned by another user; nothing in it is believed")
        }
        guard status.st_mode & (secret ? 0o077 : 0o022) == 0 else {
            throw CommandFailure("\(what) \(shown) may be \(secret ? "read or written" : "written") by others (mode \(String(status.st_mode & 0o777, radix: 8)))")
        }
        guard status.st_size <= off_t(maximumSize) else { throw CommandFailure("\(what) \(shown) is over \(maximumSize) bytes") }
        return try body(descriptor, Int(status.st_size))
    }

    /// The whole file, read under the same checks.
    static func read(_ path: String, what: String, maximumSize: Int) throws -> Data {
        try open(path, what: what, secret: false, maximumSize: maximumSize) { descriptor, size in
            var bytes = [UInt8](repeating: 0, count: size)
            let read = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard read == size else { throw CommandFailure("cannot read \(what) \(path.displaySafe(maximumLength: 256))") }
            return Data(bytes)
        }
    }
}
