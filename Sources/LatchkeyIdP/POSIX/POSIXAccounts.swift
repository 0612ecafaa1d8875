import Foundation
import LatchkeyOAuth
import LatchkeyProtocol

/// Identities' POSIX accounts (docs/PROTOCOL.md section 14): a `uid` from the provider's
/// range (``POSIXIDLedger``), fixed for the identity's life; a user private group with
/// `gid` = `uid`; a home, a shell and a GECOS field.
///
/// A username that is reserved for a host's own accounts (``ReservedUsernames``) or that
/// is not a POSIX name (``POSIXName``) never gets an account, and neither does one a group
/// is named (a host would see two groups of one name: the user private group and the
/// other). Every change bumps ``HostDirectoryVersion`` and writes `posix.changed`.
struct POSIXAccounts: Sendable {
    let context: ProviderContext
    let identities: IdentityDirectory
    let ledger: POSIXIDLedger

    static let defaultShell = "/bin/bash"

    /// One account as stored, with its identity's username and display name.
    struct Account: Sendable {
        var identityID: String
        var username: String
        var displayName: String
        var uid: Int64
        var home: String
        var shell: String
        /// What the admin set; nil: the display name, made safe (``POSIXName/gecos(fromDisplayName:)``).
        var gecos: String?

        var view: AdminAPI.POSIXAccount {
            AdminAPI.POSIXAccount(
                identity: identityID, username: username, uid: uid, gid: uid, home: home, shell: shell,
                gecos: gecos ?? POSIXName.gecos(fromDisplayName: displayName)
            )
        }
    }

    /// Gives `identity` (an id or a username) an account, allocating its `uid` the first
    /// time, or changes the fields `change` names.
    func set(_ identity: String, _ change: AdminAPI.POSIXAccountChange, now: Date = ProviderClock.now) async throws -> AdminAPI.POSIXAccount {
        if let shell = change.shell { try POSIXName.checkPath(shell, "shell") }
        if let home = change.home { try POSIXName.checkPath(home, "home") }
        if let gecos = change.gecos { try POSIXName.checkGECOS(gecos) }
        return try await context.database.exclusiveTransaction(lock: POSIXIDLedger.lockKey) { transaction in
            guard let found = try await identities.resolve(identity, in: transaction) else { throw ProviderError.notFound("no such identity") }
            try Self.checkName(found.username, reserved: identities.reserved)
            try await Self.checkNoGroup(named: found.username, in: transaction)
            var account: Account
            if let existing = try await self.account(of: found.id, in: transaction) {
                account = existing
                account.shell = change.shell ?? account.shell
                account.home = change.home ?? account.home
                account.gecos = change.gecos ?? account.gecos
                try await transaction.execute("""
                    UPDATE posix_accounts SET home = \(account.home), shell = \(account.shell), gecos = \(account.gecos), changed_at = \(now)
                    WHERE identity_id = \(found.id)
                    """)
            } else {
                var uid = try await ledger.userID(of: found.id, in: transaction)
                if uid == nil { uid = try await ledger.allocate(.user, owner: found.id, now: now, in: transaction) }
                guard let uid else { throw ProviderError.serverError("no uid was allocated") }
                account = Account(
                    identityID: found.id, username: found.username, displayName: found.displayName, uid: uid,
                    home: change.home ?? "/home/\(found.username)", shell: change.shell ?? Self.defaultShell, gecos: change.gecos
                )
                try await transaction.execute("""
                    INSERT INTO posix_accounts (identity_id, uid, home, shell, gecos, changed_at)
                    VALUES (\(found.id), \(uid), \(account.home), \(account.shell), \(account.gecos), \(now))
                    """)
            }
            try await HostDirectoryVersion.bump(in: transaction)
            try await context.audit.record(AuditEntry(
                .posixChanged, actor: .admin, subject: found.id,
                details: AuditEvent.Details(username: found.username, change: AuditChange.set.rawValue, uid: account.uid), now: now
            ), in: transaction)
            return account.view
        }
    }

    /// Takes `identity`'s account away; its `uid` stays its own in the ledger.
    func unset(_ identity: String, now: Date = ProviderClock.now) async throws -> Bool {
        try await context.database.transaction { transaction in
            guard let found = try await identities.resolve(identity, in: transaction) else { throw ProviderError.notFound("no such identity") }
            guard let row = try await transaction.first("DELETE FROM posix_accounts WHERE identity_id = \(found.id) RETURNING uid") else { return false }
            try await HostDirectoryVersion.bump(in: transaction)
            try await context.audit.record(AuditEntry(
                .posixChanged, actor: .admin, subject: found.id,
                details: AuditEvent.Details(username: found.username, change: AuditChange.unset.rawValue, uid: try row.decode("uid", as: Int64.self)), now: now
            ), in: transaction)
            return true
        }
    }

    func account(of identityID: String, in transaction: any SQLTransaction) async throws -> Account? {
        guard let row = try await transaction.first("""
            SELECT p.identity_id, i.username, i.display_name, p.uid, p.home, p.shell, p.gecos
            FROM posix_accounts p JOIN identities i ON i.id = p.identity_id WHERE p.identity_id = \(identityID)
            """)
        else { return nil }
        return Account(
            identityID: try row.decode("identity_id"), username: try row.decode("username"), displayName: try row.decode("display_name"),
            uid: try row.decode("uid"), home: try row.decode("home"), shell: try row.decode("shell"), gecos: try row.decode("gecos")
        )
    }

    /// A name an account may have: not reserved, and a POSIX name.
    static func checkName(_ username: String, reserved: ReservedUsernames) throws(ProviderError) {
        guard !reserved.contains(username) else {
            throw ProviderError.badRequest(.reservedUsername, "this username is reserved for a host's own accounts: it gets no POSIX account")
        }
        try POSIXName.check(username, "the username")
    }

    /// Refuses a name a group already has.
    static func checkNoGroup(named name: String, in transaction: any SQLTransaction) async throws {
        if try await transaction.first("SELECT gid FROM posix_groups WHERE name = \(name)") != nil {
            throw ProviderError.conflict("a POSIX group is named \(name): an account's user private group would clash with it")
        }
    }

    /// What deleting an identity does to hosts: its account and memberships go, its `uid`
    /// stays in the ledger. True when hosts saw anything of it.
    static func forget(_ identityID: String, in transaction: any SQLTransaction) async throws -> Bool {
        let accounts = try await transaction.query("DELETE FROM posix_accounts WHERE identity_id = \(identityID) RETURNING uid")
        let memberships = try await transaction.query("DELETE FROM posix_group_members WHERE identity_id = \(identityID) RETURNING gid")
        guard !accounts.isEmpty || !memberships.isEmpty else { return false }
        try await HostDirectoryVersion.bump(in: transaction)
        return true
    }
}
