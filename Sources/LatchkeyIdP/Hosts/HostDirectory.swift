import Foundation
import LatchkeyOAuth
import LatchkeyProtocol

/// What a host reads at `GET /v1/hosts/directory` (docs/PROTOCOL.md section 14): the
/// POSIX accounts and groups its labels are granted, paged, at one version.
///
/// A host authenticates with its registered client's own token (client credentials,
/// scope `host`, DPoP-bound when it asked so); a person's token is refused. Its view is
/// computed from the policy on every page: the groups granted on any of its labels, and
/// the accounts of their members. Nothing else of the directory reaches it, not a group
/// it is not granted, not an account of no such group, not a member without an account.
struct HostDirectory: Sendable {
    let context: ProviderContext
    let tokens: TokenEndpoint

    enum Answer: Sendable {
        /// The host has this version already (`If-None-Match`).
        case notModified(version: Int64)
        case page(HostDirectoryPage, version: Int64)
    }

    /// About how many bytes of accounts a page holds at most.
    static let maximumPageBytes = 512 * 1024

    /// The quoted entity tag of `version` (RFC 9110 §8.8.3).
    static func entityTag(_ version: Int64) -> String { "\"\(version)\"" }

    func read(
        _ presentation: TokenEndpoint.Presentation, cursor: String?, limit: Int?, ifNoneMatch: String?, now: Date = ProviderClock.now
    ) async throws -> Answer {
        let position: HostDirectoryCursor?
        if let cursor {
            guard let parsed = HostDirectoryCursor(cursor) else { throw ProviderError.badRequest(.invalidRequest, "cursor is not a next of this endpoint") }
            position = parsed
        } else {
            position = nil
        }
        let limit = min(max(limit ?? HostDirectoryPage.defaultLimit, 10), HostDirectoryPage.maximumLimit)
        let url = context.url(ProtocolPath.hostDirectory)
        // A bearer token's host asking whether anything changed is answered from a
        // lookup that waits for no writer: the token and the version are one statement
        // each. A page, and any DPoP proof (spent: a write), take a transaction, so a
        // page is of one version.
        if presentation.scheme == .bearer, position == nil, let ifNoneMatch {
            let version = try await context.database.read { transaction in
                _ = try await authorize(presentation, url: url, now: now, in: transaction)
                return try await HostDirectoryVersion.current(in: transaction)
            }
            if Self.matches(ifNoneMatch, Self.entityTag(version)) { return .notModified(version: version) }
        }
        return try await context.database.transaction { transaction in
            let clientID = try await authorize(presentation, url: url, now: now, in: transaction)
            let version = try await HostDirectoryVersion.current(in: transaction)
            if let position {
                guard position.version == version else {
                    throw ProviderError(.conflict, code: .directoryChanged, reason: "the directory changed during the walk: start again without a cursor")
                }
            } else if let ifNoneMatch, Self.matches(ifNoneMatch, Self.entityTag(version)) {
                return .notModified(version: version)
            }
            let page = try await Self.page(for: clientID, version: version, from: position, limit: limit, in: transaction)
            return .page(page, version: version)
        }
    }

    /// The host (a registered client) a token of scope `host` was issued to; anything
    /// else is refused.
    private func authorize(_ presentation: TokenEndpoint.Presentation, url: URL, now: Date, in transaction: any SQLTransaction) async throws -> String {
        let holder = try await tokens.resourceHolder(presentation, method: HTTPMethod.get, url: url, acceptingClients: true, now: now, in: transaction)
        guard case .client(let grant) = holder else {
            throw ProviderError(.scopeInsufficient, code: .insufficientScope, reason: "the host directory is for hosts: present a registered client's client credentials token with scope host")
        }
        guard grant.scope.split(separator: " ").contains(Substring(HostDirectoryPage.scope)) else {
            throw ProviderError.insufficientScope(HostDirectoryPage.scope)
        }
        return grant.clientID
    }

    /// RFC 9110 §13.1.2: `*`, or a list of entity tags compared weakly (`W/` ignored),
    /// compared as bytes: every poll of every host runs it.
    static func matches(_ header: String, _ tag: String) -> Bool {
        let bytes = Array(header.utf8)
        guard bytes.count <= 1024 else { return false }
        let wanted = Array(tag.utf8)
        var index = 0
        while index < bytes.count {
            var end = index
            while end < bytes.count, bytes[end] != UInt8(ascii: ",") { end += 1 }
            var start = index
            var stop = end
            while start < stop, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") { start += 1 }
            while stop > start, bytes[stop - 1] == UInt8(ascii: " ") || bytes[stop - 1] == UInt8(ascii: "\t") { stop -= 1 }
            if stop - start == 1, bytes[start] == UInt8(ascii: "*") { return true }
            if stop - start >= 2, bytes[start] == UInt8(ascii: "W"), bytes[start + 1] == UInt8(ascii: "/") { start += 2 }
            if bytes[start..<stop].elementsEqual(wanted) { return true }
            index = end + 1
        }
        return false
    }

    /// The groups the host `clientID`'s labels are granted (a subquery of every page).
    private static func visibleGroups(_ clientID: String) -> SQLStatement {
        "SELECT a.gid FROM host_access a JOIN host_labels l ON l.label = a.label WHERE l.client_id = \(clientID)"
    }

    static func page(
        for clientID: String, version: Int64, from position: HostDirectoryCursor?, limit: Int, in transaction: any SQLTransaction
    ) async throws -> HostDirectoryPage {
        var budget = limit
        var accounts: [HostDirectoryPage.Account] = []
        var groups: [HostDirectoryPage.Group] = []
        var fromGID: Int64 = 0
        var afterMember: Int64 = -1
        if case .groups(_, let gid, let member) = position {
            fromGID = gid
            afterMember = member
        } else {
            // A walk's first page, or one of accounts: the accounts after the cursor's.
            var after: Int64 = -1
            if case .accounts(_, let uid) = position { after = uid }
            if let next = try await readAccounts(for: clientID, after: after, budget: &budget, into: &accounts, version: version, in: transaction) {
                return HostDirectoryPage(version: String(version), accounts: accounts, groups: [], next: next.text)
            }
        }
        let rows = try await transaction.query("""
            SELECT g.gid, g.name, max(a.sudo) AS sudo FROM posix_groups g
            JOIN host_access a ON a.gid = g.gid JOIN host_labels l ON l.label = a.label
            WHERE l.client_id = \(clientID) AND g.gid >= \(fromGID)
            GROUP BY g.gid, g.name ORDER BY g.gid
            """)
        // The members of every visible group from the cursor on, in one statement: a page
        // needs at most `budget` of them (each group's header counts one too), so one more
        // than that says whether the last group read goes on.
        let members = try await transaction.query("""
            SELECT m.gid, p.uid, i.username FROM posix_group_members m
            JOIN posix_accounts p ON p.identity_id = m.identity_id JOIN identities i ON i.id = m.identity_id
            WHERE m.gid IN (\(statement: visibleGroups(clientID))) AND m.gid >= \(fromGID) AND (m.gid > \(fromGID) OR p.uid > \(afterMember))
            ORDER BY m.gid, p.uid LIMIT \(Int64(budget + 1))
            """)
        var next = 0
        for row in rows {
            let gid = try row.decode("gid", as: Int64.self)
            let after = gid == fromGID ? afterMember : -1
            guard budget > 0 else {
                return HostDirectoryPage(version: String(version), accounts: accounts, groups: groups, next: HostDirectoryCursor.groups(version: version, fromGID: gid, afterMember: after).text)
            }
            budget -= 1
            var names: [String] = []
            var last = after
            while next < members.count, budget > 0, try members[next].decode("gid", as: Int64.self) == gid {
                names.append(try members[next].decode("username", as: String.self))
                last = try members[next].decode("uid", as: Int64.self)
                next += 1
                budget -= 1
            }
            groups.append(HostDirectoryPage.Group(name: try row.decode("name"), gid: gid, sudo: try row.decode("sudo", as: Int64.self) != 0, members: names))
            // Members of this group left over: the next page goes on after the last one read.
            if next < members.count, try members[next].decode("gid", as: Int64.self) == gid {
                return HostDirectoryPage(version: String(version), accounts: accounts, groups: groups, next: HostDirectoryCursor.groups(version: version, fromGID: gid, afterMember: last).text)
            }
        }
        return HostDirectoryPage(version: String(version), accounts: accounts, groups: groups, next: nil)
    }

    /// Reads up to `budget` accounts after `uid`; the cursor of the next page when more
    /// remain than fit, nil when the accounts are done (and `budget` says what is left).
    private static func readAccounts(
        for clientID: String, after uid: Int64, budget: inout Int, into accounts: inout [HostDirectoryPage.Account], version: Int64,
        in transaction: any SQLTransaction
    ) async throws -> HostDirectoryCursor? {
        // Whether an account is visible is asked from its memberships (an index on the
        // member), then the grant and the host's label (primary keys): a few lookups an
        // account. Asked as "a member of any visible group" instead, SQLite looked up every
        // visible group for every account, 160 ms a page with 1,000 groups.
        let rows = try await transaction.query("""
            SELECT p.uid, i.username, i.display_name, p.home, p.shell, p.gecos FROM posix_accounts p JOIN identities i ON i.id = p.identity_id
            WHERE p.uid > \(uid) AND EXISTS (
                SELECT 1 FROM posix_group_members m JOIN host_access a ON a.gid = m.gid JOIN host_labels l ON l.label = a.label
                WHERE m.identity_id = p.identity_id AND l.client_id = \(clientID)
            )
            ORDER BY p.uid LIMIT \(Int64(budget + 1))
            """)
        var bytes = 0
        for row in rows.prefix(budget) {
            let uid = try row.decode("uid", as: Int64.self)
            let gecos = try row.decode("gecos", as: String?.self) ?? POSIXName.gecos(fromDisplayName: try row.decode("display_name", as: String.self))
            let account = HostDirectoryPage.Account(
                name: try row.decode("username"), uid: uid, gid: uid, gecos: gecos, home: try row.decode("home"), shell: try row.decode("shell")
            )
            // Long homes, shells and GECOS fields end a page early: it stays within what a
            // client reads (1 MiB by default) whatever the admin wrote.
            bytes += account.name.utf8.count + account.gecos.utf8.count * 6 + account.home.utf8.count + account.shell.utf8.count + 96
            if bytes > maximumPageBytes, let last = accounts.last {
                budget = 0
                return .accounts(version: version, afterUID: last.uid)
            }
            accounts.append(account)
        }
        if rows.count > budget, let last = accounts.last {
            budget = 0
            return .accounts(version: version, afterUID: last.uid)
        }
        budget -= rows.count
        return nil
    }
}
