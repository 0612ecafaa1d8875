#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import Glibc

/// The names and IDs of the host's own accounts and groups (`/etc/passwd`,
/// `/etc/group`): a directory entry that clashes with any of them is never served, so a
/// local account always wins (docs/SECURITY.md, "A host's directory"). Read again
/// whenever either file changes (another inode, size or modification time), which
/// `useradd`, `vipw` and package scripts all cause.
public struct LocalAccounts: Sendable, Equatable {
    public var userNames: Set<String> = []
    var uids: Set<Int64> = []
    var groupNames: Set<String> = []
    var gids: Set<Int64> = []
    /// What the files looked like when read: device, inode, size, modification time.
    var stamp: [Int64] = []

    /// The largest file read; a bigger one is read up to here (its other lines are not
    /// known, so a clash there is not seen: the host's own problem, said in the journal).
    static let maximumFileSize = 64 << 20

    /// Reads both files.
    public static func read(passwd: String = "/etc/passwd", group: String = "/etc/group") -> LocalAccounts {
        var local = LocalAccounts()
        local.stamp = stamp(passwd) + stamp(group)
        for fields in lines(passwd) where fields.count >= 3 {
            local.userNames.insert(fields[0])
            if let uid = Int64(fields[2]) { local.uids.insert(uid) }
        }
        for fields in lines(group) where fields.count >= 3 {
            local.groupNames.insert(fields[0])
            if let gid = Int64(fields[2]) { local.gids.insert(gid) }
        }
        return local
    }

    /// Whether either file changed since this was read.
    func isStale(passwd: String, group: String) -> Bool {
        stamp != Self.stamp(passwd) + Self.stamp(group)
    }

    private static func stamp(_ path: String) -> [Int64] {
        var status = stat()
        guard stat(path, &status) == 0 else { return [-1, -1, -1, -1, -1] }
        return [Int64(status.st_dev), Int64(status.st_ino), Int64(status.st_size), Int64(status.st_mtim.tv_sec), Int64(status.st_mtim.tv_nsec)]
    }

    private static func lines(_ path: String) -> [[String]] {
        let data = FileDescriptorIO.read(path: path, upTo: maximumFileSize) ?? Data()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), !line.hasPrefix("+"), !line.hasPrefix("-") else { return nil }
            return line.split(separator: ":", omittingEmptySubsequences: false).prefix(3).map(String.init)
        }
    }
}
