import Foundation
import LatchkeyOAuth
import LatchkeyProtocol

/// Named POSIX groups (docs/PROTOCOL.md section 14): each with its own `gid` from the
/// ledger (``POSIXIDLedger``), never handed out again after the group is deleted; members
/// by identity. A member without a POSIX account is kept, and hosts see it once it has
/// one. A group name is a POSIX name, not reserved for a host's own groups (`sudo`,
/// `adm`, `docker`: ``ReservedUsernames``), and not the name of an account (its user
/// private group has it). Every change bumps ``HostDirectoryVersion`` and writes
/// `group.changed`.
struct POSIXGroups: Sendable {
    let context: ProviderContext
    let identities: IdentityDirectory
    let ledger: POSIXIDLedger

    struct Group: Sendable {
        var gid: Int64
        var name: String
        var createdAt: Date
    }

    func create(_ name: String, now: Date = ProviderClock.now) async throws -> AdminAPI.Group {
        try POSIXName.check(name, "the group name")
        guard !identities.reserved.contains(name) else {
            throw ProviderError.badRequest(.reservedUsername, "this group name is reserved for a host's own groups; choose another")
        }
        return try await context.database.exclusiveTransaction(lock: POSIXIDLedger.lockKey) { transaction in
            guard try await self.group(named: name, in: transaction) == nil else { throw ProviderError.conflict("a group is named \(name) already") }
            if try await transaction.first("""
                SELECT 1 FROM posix_accounts p JOIN identities i ON i.id = p.identity_id WHERE i.username_key = \(Username.key(name))
                """) != nil {
                throw ProviderError.conflict("\(name) is an account's user private group; choose another name")
            }
            let gid = try await ledger.allocate(.group, owner: name, now: now, in: transaction)
            do {
                try await transaction.execute("INSERT INTO posix_groups (gid, name, created_at) VALUES (\(gid), \(name), \(now))")
            } catch let error as StoreError where error.code == .duplicate {
                throw ProviderError.conflict("a group is named \(name) already")
            }
            try await HostDirectoryVersion.bump(in: transaction)
            try await record(.created, group: Group(gid: gid, name: name, createdAt: now), member: nil, now: now, in: transaction)
            return try await view(of: Group(gid: gid, name: name, createdAt: now), in: transaction)
        }
    }

    /// Deletes a group, its memberships and its host access; its `gid` is never reused.
    func delete(_ name: String, now: Date = ProviderClock.now) async throws -> Bool {
        try await context.database.transaction { transaction in
            guard let group = try await self.group(named: name, in: transaction) else { return false }
            try await transaction.execute("DELETE FROM posix_groups WHERE gid = \(group.gid)")
            try await transaction.execute("DELETE FROM posix_group_members WHERE gid = \(group.gid)")
            try await transaction.execute("DELETE FROM host_access WHERE gid = \(group.gid)")
            try await HostDirectoryVersion.bump(in: transaction)
            try await record(.deleted, group: group, member: nil, now: now, in: transaction)
            return true
        }
    }

    /// Adds or removes `identity` (an id or a username) as a member of `name`.
    func setMember(_ identity: String, of name: String, member: Bool, now: Date = ProviderClock.now) async throws -> AdminAPI.Group {
        try await context.database.transaction { transaction in
            guard let group = try await self.group(named: name, in: transaction) else { throw ProviderError.notFound("no such group") }
            guard let found = try await identities.resolve(identity, in: transaction) else { throw ProviderError.notFound("no such identity") }
            let isMember = try await transaction.first("""
                SELECT 1 FROM posix_group_members WHERE gid = \(group.gid) AND identity_id = \(found.id)
                """) != nil
            if member != isMember {
                if member {
                    try await transaction.execute("INSERT INTO posix_group_members (gid, identity_id) VALUES (\(group.gid), \(found.id))")
                } else {
                    try await transaction.execute("DELETE FROM posix_group_members WHERE gid = \(group.gid) AND identity_id = \(found.id)")
                }
                try await HostDirectoryVersion.bump(in: transaction)
                try await record(member ? .memberAdded : .memberRemoved, group: group, member: found, now: now, in: transaction)
            }
            return try await view(of: group, in: transaction)
        }
    }

    /// A page of groups by name, after `cursor` (a group name).
    func list(after cursor: String?, limit: Int) async throws -> [AdminAPI.Group] {
        let limit = Int64(min(max(limit, 1), 500))
        return try await context.database.transaction { transaction in
            let rows = try await transaction.query("""
                SELECT gid, name, created_at FROM posix_groups WHERE name > \(cursor ?? "") ORDER BY name LIMIT \(limit)
                """)
            var groups: [AdminAPI.Group] = []
            for row in rows {
                groups.append(try await view(of: Group(gid: row.decode("gid"), name: row.decode("name"), createdAt: row.decode("created_at")), in: transaction))
            }
            return groups
        }
    }

    func group(named name: String, in transaction: any SQLTransaction) async throws -> Group? {
        guard name.utf8.count <= POSIXName.maximumBytes,
              let row = try await transaction.first("SELECT gid, name, created_at FROM posix_groups WHERE name = \(name)")
        else { return nil }
        return Group(gid: try row.decode("gid"), name: try row.decode("name"), createdAt: try row.decode("created_at"))
    }

    private func view(of group: Group, in transaction: any SQLTransaction) async throws -> AdminAPI.Group {
        let count = try await transaction.first("SELECT count(*) AS n FROM posix_group_members WHERE gid = \(group.gid)")?.decode("n", as: Int64.self) ?? 0
        let access = try await transaction.query("SELECT label, sudo FROM host_access WHERE gid = \(group.gid) ORDER BY label")
        let labels = try access.map { try $0.decode("label", as: String.self) }
        let sudo = try access.filter { try $0.decode("sudo", as: Int64.self) != 0 }.map { try $0.decode("label", as: String.self) }
        return AdminAPI.Group(
            name: group.name, gid: group.gid, members: Int(count), loginLabels: labels, sudoLabels: sudo, createdAt: AuditEvent.formatTime(group.createdAt)
        )
    }

    private func record(_ change: AuditChange, group: Group, member: Identity?, now: Date, in transaction: any SQLTransaction) async throws {
        try await context.audit.record(AuditEntry(
            .groupChanged, actor: .admin, subject: member?.id,
            details: AuditEvent.Details(username: member?.username, change: change.rawValue, group: group.name, gid: group.gid), now: now
        ), in: transaction)
    }
}
