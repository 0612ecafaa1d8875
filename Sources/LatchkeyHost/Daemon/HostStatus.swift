#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What `latchkey host status` shows (docs/PROTOCOL.md section 15): when the host last
/// read its directory, how old the copy it answers from is, what it serves, and whether
/// the provider answered the last time it was asked. Written by the daemon to
/// `status.json` in its state folder after every sync (readable by anyone: it holds no
/// more than `getent` shows), and answered on its control socket.
public struct HostStatus: Codable, Hashable, Sendable {
    public var issuer: String
    public var clientID: String
    /// The directory version served; nil before the first sync.
    public var version: String?
    /// When the provider last confirmed the served directory (a sync, or a `304`).
    public var lastSync: Date?
    /// When the daemon last asked, and what went wrong then (nil when it went well).
    public var lastAttempt: Date?
    public var lastError: String?
    /// Whether the provider answered the last attempt.
    public var providerReachable: Bool
    /// Seconds since ``lastSync``.
    public var cacheAge: Int?
    /// False once the cache is older than the offline limit: no account is served then.
    public var servingAccounts: Bool
    public var offlineMaxAge: Int
    public var accountsServed: Int
    public var groupsServed: Int
    /// Entries of the last directory refused (``HostDirectoryScreen``) or left out for a
    /// clash with a local account or group.
    public var refused: Int
    public var clashes: Int
    public var userDatabaseSocket: String
    public var daemonPID: Int32?

    public init(
        issuer: String, clientID: String, version: String?, lastSync: Date?, lastAttempt: Date?, lastError: String?, providerReachable: Bool,
        cacheAge: Int?, servingAccounts: Bool, offlineMaxAge: Int, accountsServed: Int, groupsServed: Int, refused: Int, clashes: Int,
        userDatabaseSocket: String, daemonPID: Int32?
    ) {
        self.issuer = issuer
        self.clientID = clientID
        self.version = version
        self.lastSync = lastSync
        self.lastAttempt = lastAttempt
        self.lastError = lastError
        self.providerReachable = providerReachable
        self.cacheAge = cacheAge
        self.servingAccounts = servingAccounts
        self.offlineMaxAge = offlineMaxAge
        self.accountsServed = accountsServed
        self.groupsServed = groupsServed
        self.refused = refused
        self.clashes = clashes
        self.userDatabaseSocket = userDatabaseSocket
        self.daemonPID = daemonPID
    }

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    /// The status the daemon last wrote in `stateDirectory`, or nil.
    public static func lastWritten(in stateDirectory: URL) -> HostStatus? {
        guard let data = try? HostFiles.read(stateDirectory.appendingPathComponent("status.json").path, maximumSize: 64 * 1024) else { return nil }
        return try? decoder().decode(HostStatus.self, from: data)
    }

    /// As JSON, for `latchkey host status --json`.
    public func json() throws -> Data {
        try Self.encoder().encode(self)
    }
}
