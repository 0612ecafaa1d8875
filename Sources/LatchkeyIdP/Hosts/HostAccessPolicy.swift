import Foundation
import LatchkeyOAuth
import LatchkeyProtocol

/// Which groups may log in, and use `sudo`, on which hosts (docs/PROTOCOL.md section 14).
/// A host is a registered client; an admin gives it labels (`web`, `db`), and grants a
/// group login on every host with a label. A host sees the groups its labels are granted
/// and their members' accounts, nothing else of the directory (``HostDirectory``). Every
/// change bumps ``HostDirectoryVersion`` and writes `host.access.changed`.
struct HostAccessPolicy: Sendable {
    let context: ProviderContext
    let groups: POSIXGroups

    /// The most labels a host may have.
    static let maximumLabels = 32

    /// A label: 1 to 63 bytes of lower-case letters, digits, `.`, `_` and `-`, starting
    /// with a letter or digit.
    static func isLabel(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        func plain(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        guard (1...63).contains(bytes.count), plain(bytes[0]) else { return false }
        return bytes.allSatisfy { plain($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    static func checkLabel(_ text: String) throws(ProviderError) {
        guard isLabel(text) else {
            throw ProviderError.badRequest(.invalidRequest, "a host label is 1 to 63 bytes of lower-case letters, digits, ., _ and -, starting with a letter or digit")
        }
    }

    /// Replaces the labels of the registered client `clientID`.
    func setLabels(_ labels: [String], ofClient clientID: String, now: Date = ProviderClock.now) async throws -> [String] {
        guard labels.count <= Self.maximumLabels else {
            throw ProviderError.badRequest(.invalidRequest, "a host has at most \(Self.maximumLabels) labels")
        }
        for label in labels { try Self.checkLabel(label) }
        let wanted = Set(labels).sorted()
        return try await context.database.transaction { transaction in
            guard try await transaction.first("SELECT id FROM clients WHERE id = \(clientID)") != nil else {
                throw ProviderError.notFound("no such registered client: a host is a registered client (latchkey pam enroll)")
            }
            try await transaction.execute("DELETE FROM host_labels WHERE client_id = \(clientID)")
            for label in wanted {
                try await transaction.execute("INSERT INTO host_labels (client_id, label) VALUES (\(clientID), \(label))")
            }
            try await HostDirectoryVersion.bump(in: transaction)
            try await context.audit.record(AuditEntry(
                .hostAccessChanged, actor: .admin, client: clientID, details: AuditEvent.Details(change: AuditChange.labelsSet.rawValue, labels: wanted), now: now
            ), in: transaction)
            return wanted
        }
    }

    /// Lets `group`'s members log in to every host labelled `label`, and with `sudo`, use sudo there.
    func grant(label: String, group name: String, sudo: Bool, now: Date = ProviderClock.now) async throws -> AdminAPI.HostAccess {
        try Self.checkLabel(label)
        return try await context.database.transaction { transaction in
            guard let group = try await groups.group(named: name, in: transaction) else { throw ProviderError.notFound("no such group") }
            try await transaction.execute("DELETE FROM host_access WHERE label = \(label) AND gid = \(group.gid)")
            try await transaction.execute("INSERT INTO host_access (label, gid, sudo) VALUES (\(label), \(group.gid), \(Int64(sudo ? 1 : 0)))")
            try await HostDirectoryVersion.bump(in: transaction)
            try await context.audit.record(AuditEntry(
                .hostAccessChanged, actor: .admin,
                details: AuditEvent.Details(change: AuditChange.granted.rawValue, group: group.name, gid: group.gid, labels: [label], sudo: sudo), now: now
            ), in: transaction)
            return AdminAPI.HostAccess(label: label, group: group.name, sudo: sudo)
        }
    }

    func revoke(label: String, group name: String, now: Date = ProviderClock.now) async throws -> Bool {
        try Self.checkLabel(label)
        return try await context.database.transaction { transaction in
            guard let group = try await groups.group(named: name, in: transaction) else { throw ProviderError.notFound("no such group") }
            guard try await transaction.first("DELETE FROM host_access WHERE label = \(label) AND gid = \(group.gid) RETURNING gid") != nil else {
                return false
            }
            try await HostDirectoryVersion.bump(in: transaction)
            try await context.audit.record(AuditEntry(
                .hostAccessChanged, actor: .admin, details: AuditEvent.Details(change: AuditChange.revoked.rawValue, group: group.name, gid: group.gid, labels: [label]), now: now
            ), in: transaction)
            return true
        }
    }

    /// What deleting a client does to hosts: its labels go (an id registered again starts
    /// with none).
    static func forget(client clientID: String, in transaction: any SQLTransaction) async throws {
        if try await !transaction.query("DELETE FROM host_labels WHERE client_id = \(clientID) RETURNING label").isEmpty {
            try await HostDirectoryVersion.bump(in: transaction)
        }
    }
}
