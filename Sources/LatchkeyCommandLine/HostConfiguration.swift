#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey
import LatchkeyHost
import LatchkeyProtocol

/// `/etc/latchkey/host.conf`, what `latchkey host run` and the host's commands run by
/// (docs/guides/fleet.md; docs/PROTOCOL.md section 15). One `key = value` a line,
/// `#` comments:
///
/// ```
/// issuer = https://id.example.com
/// client-id = web-1
/// vault = /var/lib/latchkey/pam
/// vault-key-file = /etc/latchkey/pam-vault.key
/// state-dir = /var/lib/latchkey/host
/// userdb-service = io.latchkey
/// interval = 60
/// offline-max-age = 604800
/// id-range = 65536-99999
/// home-base = /home
/// sudoers-file = /etc/sudoers.d/latchkey
/// ssh-ca-file = /etc/ssh/latchkey_ca.pub
/// ssh-krl-file = /etc/ssh/latchkey.krl
/// ```
///
/// The vault is the one `latchkey pam enroll` makes: one client key serves both. Like
/// pam.conf, the file is believed only when root owns it and no one else may write it.
struct HostConfiguration: Sendable, Equatable {
    static let defaultPath = "/etc/latchkey/host.conf"
    static let maximumSize = 64 * 1024
    static let defaultStateDirectory = "/var/lib/latchkey/host"
    static let defaultService = "io.latchkey"
    static let userDatabaseDirectory = "/run/systemd/userdb"

    var issuer: URL
    var clientID: String
    var vault: URL
    var vaultKeyFile: URL
    var stateDirectory = defaultStateDirectory
    var userDatabaseService = defaultService
    var interval = 60
    var offlineMaxAge = 7 * 24 * 3600
    var idRange: ClosedRange<Int64> = 65536...99999
    var homeBase = "/home"
    var sudoersFile: String?
    var sshCAFile: String?
    var sshKRLFile: String?
    var tpm: String?

    var userDatabaseSocket: String { Self.userDatabaseDirectory + "/" + userDatabaseService }
    var controlSocket: String { stateDirectory + "/control.socket" }

    static func load(_ path: String) throws -> HostConfiguration {
        let data = try TrustedFile.read(path, what: "the host configuration", maximumSize: maximumSize)
        return try parse(String(decoding: data, as: UTF8.self), path: path)
    }

    /// A userdb service name: the socket's file name, so a plain word (`io.latchkey`).
    static func isServiceName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count) && name.first != "."
            && name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-._".unicodeScalars.contains($0)) }
    }

    /// `FIRST-LAST`, both in no range a host keeps (``POSIXHostIDs``).
    static func idRange(_ text: String) -> ClosedRange<Int64>? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let first = Int64(parts[0]), let last = Int64(parts[1]), first <= last, POSIXHostIDs.overlap(first...last) == nil, first >= 0 else {
            return nil
        }
        return first...last
    }

    static func parse(_ text: String, path: String = defaultPath) throws -> HostConfiguration {
        var values: [String: String] = [:]
        let keys = ["issuer", "client-id", "vault", "vault-key-file", "state-dir", "userdb-service", "interval", "offline-max-age", "id-range", "home-base", "sudoers-file", "ssh-ca-file", "ssh-krl-file", "tpm"]
        for line in try KeyValueLine.parse(text, path: path, maximumValueLength: 1024) {
            guard keys.contains(line.key) else { throw line.refusal("unknown key \(line.key.displaySafe(maximumLength: 64))", path: path) }
            guard values[line.key] == nil else { throw line.refusal("\(line.key) given twice", path: path) }
            values[line.key] = line.value
        }
        let shown = path.displaySafe(maximumLength: 256)
        func required(_ key: String) throws -> String {
            guard let value = values[key] else { throw CommandFailure("\(shown) names no \(key)") }
            return value
        }
        func absolute(_ key: String) throws -> String? {
            guard let value = values[key] else { return nil }
            guard value.hasPrefix("/"), POSIXName.isValidPath(value) else { throw CommandFailure("\(shown): \(key) must be an absolute path") }
            return value
        }
        guard let issuer = URL(string: try required("issuer")), issuer.scheme == "https" || issuer.scheme == "http", issuer.host != nil else {
            throw CommandFailure("\(shown): issuer is not an http(s) URL")
        }
        guard let vault = try absolute("vault"), let vaultKeyFile = try absolute("vault-key-file") else {
            throw CommandFailure("\(shown) names no vault or vault-key-file")
        }
        var configuration = HostConfiguration(
            issuer: issuer, clientID: try required("client-id"), vault: URL(fileURLWithPath: vault), vaultKeyFile: URL(fileURLWithPath: vaultKeyFile)
        )
        if let folder = try absolute("state-dir") { configuration.stateDirectory = folder }
        if let service = values["userdb-service"] {
            guard isServiceName(service) else { throw CommandFailure("\(shown): userdb-service is a plain name such as io.latchkey") }
            configuration.userDatabaseService = service
        }
        if let interval = values["interval"] {
            guard let seconds = Int(interval), (1...86400).contains(seconds) else { throw CommandFailure("\(shown): interval is 1 to 86400 seconds") }
            configuration.interval = seconds
        }
        if let age = values["offline-max-age"] {
            guard let seconds = Int(age), (1...(366 * 86400)).contains(seconds) else { throw CommandFailure("\(shown): offline-max-age is 1 to 31622400 seconds") }
            configuration.offlineMaxAge = seconds
        }
        if let range = values["id-range"] {
            guard let ids = idRange(range) else {
                throw CommandFailure("\(shown): id-range is FIRST-LAST outside every range a host keeps (65536-99999, or within 1879048192-2147352575)")
            }
            configuration.idRange = ids
        }
        if let base = try absolute("home-base") { configuration.homeBase = base }
        configuration.sudoersFile = try absolute("sudoers-file")
        configuration.sshCAFile = try absolute("ssh-ca-file")
        configuration.sshKRLFile = try absolute("ssh-krl-file")
        if let tpm = values["tpm"] {
            guard PAMConfiguration.isTPMLocation(tpm) else { throw CommandFailure("\(shown): tpm is a TCTI such as device:/dev/tpmrm0") }
            configuration.tpm = tpm
        }
        return configuration
    }

    /// The file `latchkey host enroll` writes.
    func rendered() -> String {
        var lines = [
            "# latchkey host: this host's copy of the provider's directory (docs/guides/fleet.md)",
            "issuer = \(issuer.absoluteString)",
            "client-id = \(clientID)",
            "vault = \(vault.path)",
            "vault-key-file = \(vaultKeyFile.path)",
            "state-dir = \(stateDirectory)",
            "userdb-service = \(userDatabaseService)",
            "interval = \(interval)",
            "# How long (seconds) the cache answers for accounts when the provider cannot be reached:",
            "offline-max-age = \(offlineMaxAge)",
            "# The IDs this host takes from the directory (the provider's --posix-uid-range):",
            "id-range = \(idRange.lowerBound)-\(idRange.upperBound)",
            "home-base = \(homeBase)",
        ]
        lines.append(sudoersFile.map { "sudoers-file = \($0)" } ?? "# sudoers-file = /etc/sudoers.d/latchkey")
        lines.append("# The provider's SSH CA keys and KRL, for sshd's TrustedUserCAKeys and RevokedKeys:")
        lines.append(sshCAFile.map { "ssh-ca-file = \($0)" } ?? "# ssh-ca-file = /etc/ssh/latchkey_ca.pub")
        lines.append(sshKRLFile.map { "ssh-krl-file = \($0)" } ?? "# ssh-krl-file = /etc/ssh/latchkey.krl")
        if let tpm { lines += ["# The TPM that holds this host's client key:", "tpm = \(tpm)"] }
        return lines.joined(separator: "\n") + "\n"
    }
}
