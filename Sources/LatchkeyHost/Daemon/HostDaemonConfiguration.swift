#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import Latchkey
public import Logging

extension HostDaemon {
    /// How a host daemon runs (`latchkey host run`; `/etc/latchkey/host.conf`).
    public struct Configuration: Sendable {
        public var issuer: URL
        public var clientID: String
        /// The facade over the host's vault, which holds its client key.
        public var embedded: Embedded
        /// The cache, its key, the instance lock and `status.json`.
        public var stateDirectory: URL
        /// The name nss-systemd sees: the socket is `userDatabaseDirectory/<name>`.
        public var userDatabaseService = "io.latchkey"
        public var userDatabaseDirectory = "/run/systemd/userdb"
        /// Root's own socket for `latchkey host sync --now` and `status`; by default
        /// `control.socket` in the state folder.
        public var controlSocket: String?
        /// Seconds between syncs (a tenth either way at random, so a fleet does not ask
        /// all at once); a failed sync is tried again sooner, backing off.
        public var interval: TimeInterval = 60
        /// How long the cache answers for accounts after the provider last confirmed it.
        public var offlineMaxAge: TimeInterval = 7 * 24 * 3600
        /// The IDs this host takes from the directory.
        public var idRange: ClosedRange<Int64> = 65536...99999
        /// Where directory homes must be.
        public var homeBase = "/home"
        public var shellsFile = "/etc/shells"
        public var passwdFile = "/etc/passwd"
        public var groupFile = "/etc/group"
        /// A sudoers drop-in the daemon keeps: `%group ALL=(ALL:ALL) ALL` for each group the
        /// directory grants sudo on this host; nil for none.
        public var sudoersFile: String?
        /// Where the daemon keeps the provider's SSH CA keys (`TrustedUserCAKeys`) and KRL
        /// (`RevokedKeys`) for `sshd`; nil for none.
        public var sshCAFile: String?
        public var sshKRLFile: String?
        public var logger: Logger

        public init(issuer: URL, clientID: String, embedded: Embedded, stateDirectory: URL, logger: Logger) {
            self.issuer = issuer
            self.clientID = clientID
            self.embedded = embedded
            self.stateDirectory = stateDirectory
            self.logger = logger
        }

        var userDatabaseSocket: String { userDatabaseDirectory + "/" + userDatabaseService }
        var controlSocketPath: String { controlSocket ?? stateDirectory.appendingPathComponent("control.socket").path }
    }
}
