#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import LatchkeyProtocol

/// A directory account's home, made at its first session (`pam_latchkey` session step,
/// `latchkey host pam-session`) the way `pam_mkhomedir` and `adduser` make one: a copy
/// of `/etc/skel`, owned by the account's `uid` and `gid`, the home itself mode 0700.
///
/// The home is made as root's, filled while no one else can enter it, and given to the
/// account last; nothing in it is followed as a link while copying (a link in the
/// skeleton is copied as a link). An existing home is left as it is, whoever owns it.
/// The path must be under `homeBase`, whose folder must exist and be root's, writable by
/// no one else: a home is never made through another user's folder.
public enum HomeDirectory {
    /// Makes `home` for `uid`:`gid` when missing; true when it was made now.
    @discardableResult
    public static func make(_ home: String, uid: Int64, gid: Int64, homeBase: String, skeleton: String = "/etc/skel") throws -> Bool {
        let base = homeBase.hasSuffix("/") ? String(homeBase.dropLast()) : homeBase
        guard POSIXName.isValidPath(home), home.hasPrefix(base + "/"), home.utf8.count > base.utf8.count + 1 else {
            throw HostError(.system, "home \(home.displaySafe(maximumLength: 80)) is not under \(base)")
        }
        guard uid > 0, gid > 0, let owner = uid_t(exactly: uid), let group = gid_t(exactly: gid) else {
            throw HostError(.system, "refusing to make a home for uid \(uid)")
        }
        var status = stat()
        if lstat(home, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFDIR else { throw HostError(.system, "\(home) exists and is not a directory") }
            return false
        }
        let parent = URL(fileURLWithPath: home).deletingLastPathComponent().path
        guard lstat(parent, &status) == 0, status.st_mode & S_IFMT == S_IFDIR, status.st_uid == 0, status.st_mode & 0o022 == 0 else {
            throw HostError(.system, "\(parent) must be a directory of root's that no one else may write")
        }
        guard mkdir(home, 0o700) == 0 else {
            if errno == EEXIST { return false }
            throw HostError(.system, "cannot make \(home): \(String(cString: strerror(errno)))")
        }
        do {
            try copyContents(of: skeleton, into: home, uid: owner, gid: group)
            guard lchown(home, owner, group) == 0, chmod(home, 0o700) == 0 else {
                throw HostError(.system, "cannot give \(home) to uid \(uid): \(String(cString: strerror(errno)))")
            }
        } catch {
            try? FileManager.default.removeItem(atPath: home)
            throw error
        }
        return true
    }

    /// Copies what `skeleton` holds (files, folders and links, not followed) into
    /// `destination`, each given to `uid`:`gid` with its own mode less group and other
    /// write. A missing skeleton copies nothing.
    private static func copyContents(of skeleton: String, into destination: String, uid: uid_t, gid: gid_t) throws {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: skeleton) else { return }
        for name in names.sorted() {
            let source = skeleton + "/" + name
            let target = destination + "/" + name
            var status = stat()
            guard lstat(source, &status) == 0 else { continue }
            let mode = status.st_mode & 0o755
            switch status.st_mode & S_IFMT {
            case S_IFDIR:
                guard mkdir(target, mode | 0o700) == 0 else { throw HostError(.system, "cannot make \(target): \(String(cString: strerror(errno)))") }
                try copyContents(of: source, into: target, uid: uid, gid: gid)
            case S_IFREG:
                let data = try HostFiles.read(source, maximumSize: 16 << 20)
                let descriptor = open(target, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
                guard descriptor >= 0 else { throw HostError(.system, "cannot make \(target): \(String(cString: strerror(errno)))") }
                let written = data.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
                close(descriptor)
                guard written == data.count else { throw HostError(.system, "cannot write \(target)") }
            case S_IFLNK:
                let link = try FileManager.default.destinationOfSymbolicLink(atPath: source)
                guard symlink(link, target) == 0 else { throw HostError(.system, "cannot make \(target): \(String(cString: strerror(errno)))") }
            default:
                continue
            }
            guard lchown(target, uid, gid) == 0 else { throw HostError(.system, "cannot give \(target) to uid \(uid): \(String(cString: strerror(errno)))") }
        }
    }
}
