import LatchkeyProtocol

/// What the host serves right now, and how it is found: the screened directory less every
/// entry that clashes with a local account or group (``LocalAccounts``), each account
/// with its user private group (named like it, `gid` = `uid`), indexed by name and ID.
/// Built anew after each sync and whenever `/etc/passwd` or `/etc/group` changes, and
/// swapped in whole, so a lookup always sees one directory.
///
/// Past the offline limit (``servesAccounts`` false) no account is served, and no private
/// group; the directory's other groups still resolve by name and ID, with no members,
/// so `ls -l` keeps showing their names.
final class HostDirectoryIndex: Sendable {
    struct Group: Sendable, Hashable {
        var name: String
        var gid: Int64
        var members: [String]
    }

    let version: String?
    let servesAccounts: Bool
    let accounts: [HostDirectoryPage.Account]
    let groups: [Group]
    private let accountByName: [String: Int]
    private let accountByUID: [Int64: Int]
    private let groupByName: [String: Int]
    private let groupByGID: [Int64: Int]
    /// Account name → the names of the groups it is a member of (not its private group).
    private let membershipsByUser: [String: [String]]
    /// A line for each entry left out because it clashes with a local one.
    let clashes: [String]
    /// The groups whose members may use sudo here.
    let sudoGroups: [String]

    static let empty = HostDirectoryIndex(directory: nil, local: LocalAccounts(), servesAccounts: false)

    init(directory: HostDirectory?, local: LocalAccounts, servesAccounts: Bool) {
        version = directory?.version
        self.servesAccounts = servesAccounts
        var clashes: [String] = []
        var accounts: [HostDirectoryPage.Account] = []
        var groups: [Group] = []
        for account in directory?.accounts ?? [] {
            if local.userNames.contains(account.name) || local.uids.contains(account.uid) || local.groupNames.contains(account.name)
                || local.gids.contains(account.gid) {
                clashes.append("not serving account \(account.name) (uid \(account.uid)): its name or ID is a local account's or group's (/etc/passwd, /etc/group)")
                continue
            }
            accounts.append(account)
        }
        if !servesAccounts { accounts = [] }
        let served = Set(accounts.map(\.name))
        groups = accounts.map { Group(name: $0.name, gid: $0.gid, members: []) }
        var sudo: [String] = []
        for group in directory?.groups ?? [] {
            if local.groupNames.contains(group.name) || local.gids.contains(group.gid) {
                clashes.append("not serving group \(group.name) (gid \(group.gid)): its name or gid is a local group's (/etc/group)")
                continue
            }
            groups.append(Group(name: group.name, gid: group.gid, members: group.members.filter(served.contains)))
            if group.sudo { sudo.append(group.name) }
        }
        groups.sort { $0.gid < $1.gid }
        self.accounts = accounts
        self.groups = groups
        self.clashes = clashes
        sudoGroups = sudo
        accountByName = Dictionary(accounts.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        accountByUID = Dictionary(accounts.enumerated().map { ($1.uid, $0) }, uniquingKeysWith: { first, _ in first })
        groupByName = Dictionary(groups.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        groupByGID = Dictionary(groups.enumerated().map { ($1.gid, $0) }, uniquingKeysWith: { first, _ in first })
        var memberships: [String: [String]] = [:]
        for group in groups {
            for member in group.members { memberships[member, default: []].append(group.name) }
        }
        membershipsByUser = memberships
    }

    func account(named name: String) -> HostDirectoryPage.Account? {
        accountByName[name].map { accounts[$0] }
    }

    func account(uid: Int64) -> HostDirectoryPage.Account? {
        accountByUID[uid].map { accounts[$0] }
    }

    func group(named name: String) -> Group? {
        groupByName[name].map { groups[$0] }
    }

    func group(gid: Int64) -> Group? {
        groupByGID[gid].map { groups[$0] }
    }

    /// The groups `user` is a member of, by name (its private group is its primary group,
    /// not a membership).
    func memberships(of user: String) -> [String] {
        membershipsByUser[user] ?? []
    }
}
