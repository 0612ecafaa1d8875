import LatchkeyOAuth

extension AdminAPI {
    /// `PUT /admin/identities/:identity/posix`: gives an identity a POSIX account, or
    /// changes one (docs/PROTOCOL.md section 14). The `uid` is allocated the first time,
    /// from the provider's range, and never changes after: not by a rename, not by this
    /// call. Absent fields keep what the account has (at creation: `/home/<username>`,
    /// `/bin/bash`, the display name).
    public struct POSIXAccountChange: Codable, Hashable, Sendable {
        public var shell: String?
        public var home: String?
        public var gecos: String?

        public init(shell: String? = nil, home: String? = nil, gecos: String? = nil) {
            self.shell = shell
            self.home = home
            self.gecos = gecos
        }
    }

    /// An identity's POSIX account: its user private group has `gid` = `uid`.
    public struct POSIXAccount: Codable, Hashable, Sendable {
        public var identity: String
        public var username: String
        public var uid: Int64
        public var gid: Int64
        public var home: String
        public var shell: String
        public var gecos: String

        public init(identity: String, username: String, uid: Int64, gid: Int64, home: String, shell: String, gecos: String) {
            self.identity = identity
            self.username = username
            self.uid = uid
            self.gid = gid
            self.home = home
            self.shell = shell
            self.gecos = gecos
        }
    }

    public static let setPOSIXAccount = Endpoint<POSIXAccountChange, POSIXAccount>(HTTPMethod.put, "admin/identities/:identity/posix")
    /// `DELETE /admin/identities/:identity/posix`: hosts no longer see the account; its
    /// `uid` stays the identity's, given back if it gets an account again, never to anyone else.
    public static let unsetPOSIXAccount = Endpoint<Empty, Deletion>(HTTPMethod.delete, "admin/identities/:identity/posix")

    /// `PATCH /admin/identities/:identity`: a new username. A POSIX account keeps its `uid`
    /// and home; the answer says which `uid` was kept.
    public struct IdentityRename: Codable, Hashable, Sendable {
        public var username: String

        public init(username: String) {
            self.username = username
        }
    }

    public struct IdentityRenamed: Codable, Hashable, Sendable {
        public var identity: Identity
        /// The POSIX account's `uid`, unchanged by the rename; absent without an account.
        public var uid: Int64?

        public init(identity: Identity, uid: Int64?) {
            self.identity = identity
            self.uid = uid
        }
    }

    public static let renameIdentity = Endpoint<IdentityRename, IdentityRenamed>(HTTPMethod.patch, "admin/identities/:identity")
}

extension AdminAPI {
    /// `POST /admin/groups`: a named POSIX group with its own `gid`, never reused.
    public struct GroupCreation: Codable, Hashable, Sendable {
        public var name: String

        public init(name: String) {
            self.name = name
        }
    }

    /// A group, its member count, and where its members may log in.
    public struct Group: Codable, Hashable, Sendable {
        public var name: String
        public var gid: Int64
        public var members: Int
        /// The host labels whose hosts this group may log in to.
        public var loginLabels: [String]
        /// Of those, the labels where it may use `sudo`.
        public var sudoLabels: [String]
        public var createdAt: String

        public init(name: String, gid: Int64, members: Int, loginLabels: [String], sudoLabels: [String], createdAt: String) {
            self.name = name
            self.gid = gid
            self.members = members
            self.loginLabels = loginLabels
            self.sudoLabels = sudoLabels
            self.createdAt = createdAt
        }
    }

    public struct GroupPage: Codable, Hashable, Sendable {
        public var groups: [Group]
        /// The `after` of the next page; absent on the last.
        public var next: String?

        public init(groups: [Group], next: String? = nil) {
            self.groups = groups
            self.next = next
        }
    }

    /// The query parameters of ``listGroups``: a page of `limit` groups (at most 500)
    /// `after` a group name.
    public enum GroupQuery {
        public static let after = "after"
        public static let limit = "limit"
    }

    public static let createGroup = Endpoint<GroupCreation, Group>(HTTPMethod.post, "admin/groups")
    public static let listGroups = Endpoint<Empty, GroupPage>(HTTPMethod.get, "admin/groups")
    /// `DELETE /admin/groups/:group`: its `gid` is never handed out again.
    public static let deleteGroup = Endpoint<Empty, Deletion>(HTTPMethod.delete, "admin/groups/:group")
    /// `PUT /admin/groups/:group/members/:identity` (an id or a username).
    public static let addGroupMember = Endpoint<Empty, Group>(HTTPMethod.put, "admin/groups/:group/members/:identity")
    public static let removeGroupMember = Endpoint<Empty, Group>(HTTPMethod.delete, "admin/groups/:group/members/:identity")
}
