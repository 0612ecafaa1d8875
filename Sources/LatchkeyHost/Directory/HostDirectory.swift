#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import LatchkeyProtocol

/// What a host knows of its people: the accounts and groups of one walk of the provider's
/// directory (`GET /v1/hosts/directory`, docs/PROTOCOL.md section 14), every page of the
/// same `version` put together, after ``HostDirectoryScreen`` refused what a host must
/// never serve. It is what the cache keeps and what lookups are answered from.
public struct HostDirectory: Codable, Hashable, Sendable {
    /// The provider's directory version (its `ETag`, unquoted).
    public var version: String
    /// By `uid`.
    public var accounts: [HostDirectoryPage.Account]
    /// By `gid`, each with all of its members.
    public var groups: [HostDirectoryPage.Group]

    public init(version: String, accounts: [HostDirectoryPage.Account], groups: [HostDirectoryPage.Group]) {
        self.version = version
        self.accounts = accounts
        self.groups = groups
    }

    /// The groups whose members may use `sudo` on this host.
    public var sudoGroups: [String] {
        groups.filter(\.sudo).map(\.name)
    }
}
