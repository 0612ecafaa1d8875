/// One page of `GET /v1/hosts/directory` (docs/PROTOCOL.md section 14): the accounts and
/// groups a host's policy lets it see, at one directory version.
///
/// A walk starts without a cursor and follows `next` until it is absent. Every page of a
/// walk is of the same `version`: when the directory changes mid-walk, the next page is
/// refused with `directory_changed` and the host starts again, so it never puts together
/// a directory that never was. Accounts come first (by `uid`), then groups (by `gid`); a
/// group with more members than fit a page continues on the next page under the same
/// `gid`, with the following members.
public struct HostDirectoryPage: Codable, Hashable, Sendable {
    /// The directory version this page is of; the first page's `ETag` is it, quoted.
    public var version: String
    public var accounts: [Account]
    public var groups: [Group]
    /// The `cursor` of the next page; absent on the last.
    public var next: String?

    public init(version: String, accounts: [Account], groups: [Group], next: String?) {
        self.version = version
        self.accounts = accounts
        self.groups = groups
        self.next = next
    }

    /// A POSIX account: its user private group is named like it, with `gid` = `uid`.
    public struct Account: Codable, Hashable, Sendable {
        public var name: String
        public var uid: Int64
        public var gid: Int64
        public var gecos: String
        public var home: String
        public var shell: String

        public init(name: String, uid: Int64, gid: Int64, gecos: String, home: String, shell: String) {
            self.name = name
            self.uid = uid
            self.gid = gid
            self.gecos = gecos
            self.home = home
            self.shell = shell
        }
    }

    /// A group the host's labels grant login to; `members` are account names, all of
    /// them in `accounts` of the same walk.
    public struct Group: Codable, Hashable, Sendable {
        public var name: String
        public var gid: Int64
        /// Whether its members may use `sudo` on this host.
        public var sudo: Bool
        public var members: [String]

        public init(name: String, gid: Int64, sudo: Bool, members: [String]) {
            self.name = name
            self.gid = gid
            self.sudo = sudo
            self.members = members
        }
    }

    /// The query parameters: `cursor` (a page's `next`) and `limit`, how many entries a
    /// page holds at most (an account, a group and a member each count one; at most
    /// ``maximumLimit``, by default ``defaultLimit``).
    public enum Query {
        public static let cursor = "cursor"
        public static let limit = "limit"
    }

    public static let defaultLimit = 5000
    public static let maximumLimit = 5000
    /// The scope a host's client credentials token needs.
    public static let scope = "host"
}
