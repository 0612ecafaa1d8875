import Foundation
import Glibc
import LatchkeyHost
import LatchkeyTestSupport
import Testing

/// The home `latchkey host pam-session` makes at a directory account's first login
/// (``HomeDirectory``), run as root by the PAM stack: it must never make or hand over a
/// folder where someone else could have put a link or a folder of their own.
@Suite("latchkey host: the home made at first login")
struct HomeDirectoryTests {
    /// A base folder under a fresh temporary directory, 0755, and the temporary directory.
    static func base() throws -> (TemporaryDirectory, String) {
        let scratch = try TemporaryDirectory(reachableByOtherUsers: true)
        let base = scratch.url.appendingPathComponent("home").path
        try #require(mkdir(base, 0o755) == 0 && chmod(base, 0o755) == 0)
        return (scratch, base)
    }

    static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    @Test("a home outside the base, with a dot segment, the base itself, or for uid or gid 0: refused, and nothing is made")
    func refusedPaths() throws {
        let (scratch, base) = try Self.base()
        _ = scratch
        for (home, uid, gid) in [
            (scratch.url.appendingPathComponent("elsewhere").path, Int64(70001), Int64(70001)),
            (base + "/../escape", 70001, 70001),
            (base + "/", 70001, 70001),
            (base + "/zero", 0, 70001),
            (base + "/zerogroup", 70001, 0),
        ] {
            #expect(throws: HostError.self, "\(home)") { try HomeDirectory.make(home, uid: uid, gid: gid, homeBase: base) }
        }
        #expect(!Self.exists(scratch.url.appendingPathComponent("elsewhere").path) && !Self.exists(scratch.url.appendingPathComponent("escape").path))
        #expect(!Self.exists(base + "/zero") && !Self.exists(base + "/zerogroup"))
    }

    @Test("a parent folder that is another user's, that others may write, or that is a link: refused, and nothing is made in it")
    func refusedParents() throws {
        let (scratch, base) = try Self.base()
        // Another user's folder (as root: nobody's; as anyone else: the caller's own, which
        // is not root's either).
        let theirs = base + "/theirs"
        try #require(mkdir(theirs, 0o755) == 0)
        if getuid() == 0 { try #require(chown(theirs, 65534, 65534) == 0) }
        #expect(throws: HostError.self) { try HomeDirectory.make(theirs + "/alice", uid: 70001, gid: 70001, homeBase: base) }
        #expect(!Self.exists(theirs + "/alice"))
        // A folder others may write (root's, when the suite runs as root).
        let open = base + "/open"
        try #require(mkdir(open, 0o777) == 0 && chmod(open, 0o777) == 0)
        #expect(throws: HostError.self) { try HomeDirectory.make(open + "/bob", uid: 70002, gid: 70002, homeBase: base) }
        #expect(!Self.exists(open + "/bob"))
        let groupWritable = base + "/group"
        try #require(mkdir(groupWritable, 0o775) == 0 && chmod(groupWritable, 0o775) == 0)
        #expect(throws: HostError.self) { try HomeDirectory.make(groupWritable + "/carol", uid: 70003, gid: 70003, homeBase: base) }
        #expect(!Self.exists(groupWritable + "/carol"))
        // A link to a folder elsewhere, as the parent.
        let target = scratch.url.appendingPathComponent("target").path
        try #require(mkdir(target, 0o755) == 0 && symlink(target, base + "/linked") == 0)
        #expect(throws: HostError.self) { try HomeDirectory.make(base + "/linked/dave", uid: 70004, gid: 70004, homeBase: base) }
        #expect(!Self.exists(target + "/dave"))
    }

    @Test("a home that exists as a link or a file is refused and left as it is; one that exists as a folder is left alone")
    func existingHomes() throws {
        let (scratch, base) = try Self.base()
        let elsewhere = scratch.url.appendingPathComponent("elsewhere").path
        try #require(mkdir(elsewhere, 0o755) == 0 && symlink(elsewhere, base + "/linked") == 0)
        #expect(throws: HostError.self) { try HomeDirectory.make(base + "/linked", uid: 70001, gid: 70001, homeBase: base) }
        var status = stat()
        #expect(stat(elsewhere, &status) == 0 && status.st_uid == getuid(), "the link's target was not handed over")
        try #require(FileManager.default.createFile(atPath: base + "/file", contents: Data("x".utf8)))
        #expect(throws: HostError.self) { try HomeDirectory.make(base + "/file", uid: 70001, gid: 70001, homeBase: base) }
        try #require(mkdir(base + "/present", 0o755) == 0)
        #expect(try HomeDirectory.make(base + "/present", uid: 70001, gid: 70001, homeBase: base) == false)
        #expect(lstat(base + "/present", &status) == 0 && status.st_uid == getuid(), "an existing home is not taken over")
    }

    @Test("a new home under a root folder is 0700, the account's, with the skeleton's files and links copied and not followed (as root); as anyone else, under a base that is not root's, it is refused and nothing is left")
    func made() throws {
        let (scratch, base) = try Self.base()
        let skeleton = scratch.url.appendingPathComponent("skel").path
        try #require(mkdir(skeleton, 0o755) == 0)
        try #require(FileManager.default.createFile(atPath: skeleton + "/.profile", contents: Data("# profile\n".utf8)))
        try #require(symlink("/etc/shadow", skeleton + "/shadow-link") == 0)
        let home = base + "/erin"
        if getuid() == 0 {
            #expect(try HomeDirectory.make(home, uid: 70005, gid: 70006, homeBase: base, skeleton: skeleton))
            var status = stat()
            #expect(lstat(home, &status) == 0 && status.st_uid == 70005 && status.st_gid == 70006 && status.st_mode & 0o777 == 0o700)
            #expect(lstat(home + "/.profile", &status) == 0 && status.st_uid == 70005)
            #expect(lstat(home + "/shadow-link", &status) == 0 && status.st_mode & S_IFMT == S_IFLNK && status.st_uid == 70005)
            #expect(try HomeDirectory.make(home, uid: 70005, gid: 70006, homeBase: base, skeleton: skeleton) == false)
        } else {
            #expect(throws: HostError.self) { try HomeDirectory.make(home, uid: 70005, gid: 70006, homeBase: base, skeleton: skeleton) }
            #expect(!Self.exists(home))
        }
    }
}
