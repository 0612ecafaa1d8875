import Foundation
import LatchkeyCrypto
import LatchkeyProtocol

extension HostDirectoryPage {
    /// The page as `JSONEncoder` with sorted keys writes it, written directly
    /// (``JSONObjectWriter``): a page is up to thousands of small objects, and walking them
    /// through `Encodable` containers was a quarter of a directory read's CPU
    /// (docs/PERFORMANCE.md, "The hosts' directory"). The tests decode it as the type.
    func encodedJSON() -> Data {
        let accounts = accounts.map { account in
            var writer = JSONObjectWriter(capacity: 128 + account.home.utf8.count + account.shell.utf8.count + account.gecos.utf8.count)
            writer.string("gecos", account.gecos)
            writer.integer("gid", account.gid)
            writer.string("home", account.home)
            writer.string("name", account.name)
            writer.string("shell", account.shell)
            writer.integer("uid", account.uid)
            return writer.finishedBytes()
        }
        let groups = groups.map { group in
            var writer = JSONObjectWriter(capacity: 64 + group.members.count * 16)
            writer.integer("gid", group.gid)
            writer.strings("members", group.members)
            writer.string("name", group.name)
            writer.json("sudo", (group.sudo ? "true" : "false").utf8)
            return writer.finishedBytes()
        }
        var page = JSONObjectWriter(capacity: accounts.reduce(64) { $0 + $1.count + 1 } + groups.reduce(0) { $0 + $1.count + 1 })
        page.jsonArray("accounts", accounts)
        page.jsonArray("groups", groups)
        page.string("next", ifPresent: next)
        page.string("version", version)
        return page.finished()
    }
}
