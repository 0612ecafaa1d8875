#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyProtocol

/// What a host lets into its directory, whatever the provider says (docs/SECURITY.md, "A
/// host's directory"). The provider checks the same rules when an admin sets a value; a
/// host checks them again because a provider can be wrong, old or someone else's. Each
/// entry that breaks a rule is left out with a line for the journal, and the rest is
/// served:
///
/// - names: POSIX names (``POSIXName``), never a system account's (``SystemAccountNames``:
///   `root`, base-passwd's, `systemd-*`, `_*`), never two entries with one name;
/// - IDs: inside this host's range (`id-range` in host.conf, the provider's default
///   65536–99999 unless set), never in a range the host keeps (``POSIXHostIDs``: 0,
///   system, local users, nobody), never two entries with one ID;
/// - home: an absolute path of printable ASCII under `home-base` (`/home` by default),
///   one more segment at least, no `.` or `..`;
/// - shell: one of `/etc/shells`;
/// - GECOS: no `:`, control or format characters, at most 256 bytes;
/// - a group's members: accounts of this directory; others are dropped.
///
/// Clashes with the host's own `/etc/passwd` and `/etc/group` are not decided here but at
/// every lookup (``HostDirectoryIndex``), since those files change between syncs.
struct HostDirectoryScreen: Sendable {
    var idRange: ClosedRange<Int64>
    var homeBase: String
    var shells: Set<String>

    /// The entries a host may serve, and a line for each that it may not.
    func screen(_ directory: HostDirectory) -> (directory: HostDirectory, refusals: [String]) {
        var refusals: [String] = []
        var names = Set<String>()
        var ids = Set<Int64>()
        var accounts: [HostDirectoryPage.Account] = []
        var accountNames = Set<String>()
        for account in directory.accounts {
            let who = "account \(account.name.displaySafe(maximumLength: 40)) (uid \(account.uid))"
            if let why = refusal(of: account, names: names, ids: ids) {
                refusals.append("refused \(who): \(why)")
                continue
            }
            names.insert(account.name)
            ids.insert(account.uid)
            accountNames.insert(account.name)
            accounts.append(account)
        }
        var groups: [HostDirectoryPage.Group] = []
        for var group in directory.groups {
            let what = "group \(group.name.displaySafe(maximumLength: 40)) (gid \(group.gid))"
            if let why = nameAndIDRefusal(name: group.name, id: group.gid, names: names, ids: ids) {
                refusals.append("refused \(what): \(why)")
                continue
            }
            names.insert(group.name)
            ids.insert(group.gid)
            var seen = Set<String>()
            let known = group.members.filter { accountNames.contains($0) && seen.insert($0).inserted }
            if known.count != group.members.count {
                refusals.append("\(what): left out \(group.members.count - known.count) members that are not accounts of this directory, or repeated")
            }
            group.members = known
            groups.append(group)
        }
        return (HostDirectory(version: directory.version, accounts: accounts, groups: groups), refusals)
    }

    private func refusal(of account: HostDirectoryPage.Account, names: Set<String>, ids: Set<Int64>) -> String? {
        if let why = nameAndIDRefusal(name: account.name, id: account.uid, names: names, ids: ids) { return why }
        guard account.gid == account.uid else { return "its gid \(account.gid) is not its uid (its user private group)" }
        guard isHome(account.home) else {
            return "home \(account.home.displaySafe(maximumLength: 80)) is not an absolute path under \(homeBase)"
        }
        guard POSIXName.isValidPath(account.shell), shells.contains(account.shell) else {
            return "shell \(account.shell.displaySafe(maximumLength: 80)) is not in /etc/shells"
        }
        guard POSIXName.isValidGECOS(account.gecos) else { return "its GECOS holds :, control or format characters, or is over 256 bytes" }
        return nil
    }

    private func nameAndIDRefusal(name: String, id: Int64, names: Set<String>, ids: Set<Int64>) -> String? {
        guard POSIXName.isValid(name) else { return "the name is not a POSIX name (lower-case letters, digits, _ and -, at most 32 bytes)" }
        guard !SystemAccountNames.contains(name) else { return "the name is a system account's" }
        guard POSIXHostIDs.isAssignable(id) else { return "the ID is in \(POSIXHostIDs.overlap(id...id) ?? "no range a directory may use")" }
        guard idRange.contains(id) else { return "the ID is outside this host's id-range \(idRange.lowerBound)-\(idRange.upperBound)" }
        guard !names.contains(name) else { return "another entry of the directory has this name" }
        guard !ids.contains(id) else { return "another entry of the directory has this ID" }
        return nil
    }

    private func isHome(_ home: String) -> Bool {
        let base = homeBase.hasSuffix("/") ? homeBase : homeBase + "/"
        return POSIXName.isValidPath(home) && home.hasPrefix(base) && home.utf8.count > base.utf8.count
    }
}
