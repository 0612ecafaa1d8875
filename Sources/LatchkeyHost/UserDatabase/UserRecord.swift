import LatchkeyProtocol

/// A JSON user record as systemd's User/Group Record Lookup API hands it out
/// (systemd.io/USER_RECORD, "Fields in the regular section"): what `getent passwd` shows,
/// and `service`, which nss-systemd requires of every record it takes. No privileged
/// section: a directory account has no password to hash, and none is ever sent.
struct UserRecord: Encodable, Sendable {
    var userName: String
    var uid: Int64
    var gid: Int64
    var realName: String?
    var homeDirectory: String
    var shell: String
    var service: String
    /// `regular`: a person's account (systemd's `disposition`).
    var disposition = "regular"

    init(_ account: HostDirectoryPage.Account, service: String) {
        userName = account.name
        uid = account.uid
        gid = account.gid
        realName = account.gecos.isEmpty ? nil : account.gecos
        homeDirectory = account.home
        shell = account.shell
        self.service = service
    }
}

/// A JSON group record (systemd.io/GROUP_RECORD): what `getent group` shows. `members`
/// lists the accounts that have it as a secondary group; a user private group has none.
struct GroupRecord: Encodable, Sendable {
    var groupName: String
    var gid: Int64
    var members: [String]?
    var service: String
    var disposition = "regular"

    init(_ group: HostDirectoryIndex.Group, service: String) {
        groupName = group.name
        gid = group.gid
        members = group.members.isEmpty ? nil : group.members
        self.service = service
    }
}

/// The parameters of `GetUserRecord`, `GetGroupRecord` and `GetMemberships`
/// (io.systemd.UserDatabase): whichever keys a call names; unknown ones are passed over.
struct UserDatabaseQuery: Decodable, Sendable {
    var uid: Int64?
    var userName: String?
    var gid: Int64?
    var groupName: String?
    var service: String?
}
