#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey
import LatchkeyProtocol

/// `io.systemd.UserDatabase` (systemd.io/USER_GROUP_API) over the host's directory: what
/// nss-systemd asks on `/run/systemd/userdb/<service>` for `getent`, `id`, `sshd`, `sudo`
/// and `ls`. Answers come from the index in memory alone, never from the network, so a
/// lookup takes the same time whether the provider is up or not.
///
/// - `GetUserRecord`, `GetGroupRecord`: by name, by ID, or both (which must agree); with
///   neither and `more`, every record, one reply each.
/// - `GetMemberships`: `{userName, groupName}` pairs for a user, a group, or all (`more`).
/// - A `service` other than this one's is `BadService`; nothing found is `NoRecordFound`.
struct UserDatabaseService: Sendable {
    let service: String
    let index: @Sendable () -> HostDirectoryIndex

    static let interface = "io.systemd.UserDatabase"
    static let noRecordFound = "io.systemd.UserDatabase.NoRecordFound"
    static let badService = "io.systemd.UserDatabase.BadService"

    private struct UserReply: Encodable {
        var record: UserRecord
        var incomplete = false
    }

    private struct GroupReply: Encodable {
        var record: GroupRecord
        var incomplete = false
    }

    private struct Membership: Encodable {
        var userName: String
        var groupName: String
    }

    func handle(_ call: VarlinkCall, reply: (VarlinkReply) throws -> Void) throws {
        let query: UserDatabaseQuery
        do {
            query = try call.parameters(UserDatabaseQuery.self) ?? UserDatabaseQuery()
        } catch {
            return try reply(.failure(VarlinkReply.invalidParameter, ["parameter": "parameters"]))
        }
        guard query.service == nil || query.service == service else { return try reply(.failure(Self.badService)) }
        let index = index()
        switch call.method {
        case "\(Self.interface).GetUserRecord":
            var found: [HostDirectoryPage.Account]
            switch (query.userName, query.uid) {
            case (let name?, let uid?): found = index.account(named: name).flatMap { $0.uid == uid ? [$0] : nil } ?? []
            case (let name?, nil): found = index.account(named: name).map { [$0] } ?? []
            case (nil, let uid?): found = index.account(uid: uid).map { [$0] } ?? []
            case (nil, nil):
                guard call.more else { return try reply(.failure(VarlinkReply.expectedMore)) }
                found = index.accounts
            }
            try send(found.map { UserReply(record: UserRecord($0, service: service)) }, reply: reply)
        case "\(Self.interface).GetGroupRecord":
            var found: [HostDirectoryIndex.Group]
            switch (query.groupName, query.gid) {
            case (let name?, let gid?): found = index.group(named: name).flatMap { $0.gid == gid ? [$0] : nil } ?? []
            case (let name?, nil): found = index.group(named: name).map { [$0] } ?? []
            case (nil, let gid?): found = index.group(gid: gid).map { [$0] } ?? []
            case (nil, nil):
                guard call.more else { return try reply(.failure(VarlinkReply.expectedMore)) }
                found = index.groups
            }
            try send(found.map { GroupReply(record: GroupRecord($0, service: service)) }, reply: reply)
        case "\(Self.interface).GetMemberships":
            var pairs: [Membership]
            switch (query.userName, query.groupName) {
            case (let user?, let group?):
                pairs = index.memberships(of: user).contains(group) ? [Membership(userName: user, groupName: group)] : []
            case (let user?, nil): pairs = index.memberships(of: user).map { Membership(userName: user, groupName: $0) }
            case (nil, let group?): pairs = (index.group(named: group)?.members ?? []).map { Membership(userName: $0, groupName: group) }
            case (nil, nil): pairs = index.groups.flatMap { group in group.members.map { Membership(userName: $0, groupName: group.name) } }
            }
            guard call.more || pairs.count <= 1 else { return try reply(.failure(VarlinkReply.expectedMore)) }
            try send(pairs, reply: reply)
        default:
            try reply(.failure(VarlinkReply.methodNotFound, ["method": call.method.displaySafe(maximumLength: 256)]))
        }
    }

    /// One reply per record, each but the last with `continues`; none found is
    /// `NoRecordFound`.
    private func send(_ records: [some Encodable], reply: (VarlinkReply) throws -> Void) throws {
        guard !records.isEmpty else { return try reply(.failure(Self.noRecordFound)) }
        for (offset, record) in records.enumerated() {
            try reply(try .reply(record, continues: offset < records.count - 1))
        }
    }
}
