#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import Glibc
// `stat`'s members: in this target the C header is first seen through CDispatch (SecretFile.swift).
import CDispatch
import Latchkey
import LatchkeyProtocol

/// `/etc/latchkey/pam.conf`, what `latchkey pam helper` runs by (docs/guides/pam.md; docs/PROTOCOL.md section 13). One `key = value` a line,
/// `#` comments:
///
/// ```
/// issuer = https://id.example.com
/// client-id = web-1
/// vault = /var/lib/latchkey/pam
/// vault-key-file = /etc/latchkey/pam-vault.key
/// timeout = 120
/// prompt-services = sshd
/// tpm = device:/dev/tpmrm0
/// map root = ada
/// ```
///
/// `tpm` names the TPM that holds the host's client key when `pam enroll
/// --key-protection tpm` made it there: the module starts the helper with an environment
/// of its own, so the TPM cannot come from the caller's `TPM2OPENSSL_TCTI`
/// (``TPMEnvironment``).
///
/// The helper runs as root for sshd, sudo and login, so the file is believed only when
/// root (or the user running the helper) owns it and no one else may write it; the same
/// for the vault key file. By default a PAM user is approved by the identity of the same
/// username, and `root` by no one; `map USER = IDENTITY` (repeatable) replaces that for
/// `USER` with the identities named.
struct PAMConfiguration: Sendable, Equatable {
    static let defaultPath = "/etc/latchkey/pam.conf"
    /// The longest file read.
    static let maximumSize = 64 * 1024
    /// The default and the bounds of how long a person has to approve.
    static let defaultTimeout = 120
    static let timeouts = 10...600

    var issuer: URL
    var clientID: String
    var vault: URL
    var vaultKeyFile: URL
    var timeout = defaultTimeout
    /// Services whose conversation shows messages only with a prompt (sshd's
    /// keyboard-interactive): the helper asks the person to press Enter after approving.
    var promptServices: Set<String> = ["sshd"]
    /// PAM user → the identities (usernames) that may approve it.
    var maps: [String: [String]] = [:]
    /// Where the TPM is (a `TPM2OPENSSL_TCTI` value), for a client key kept in it.
    var tpm: String?

    /// Whether `location` is a TCTI this file may name: the kernel's device, a TPM
    /// simulator or the resource manager's daemon, in at most 256 printable bytes.
    static func isTPMLocation(_ location: String) -> Bool {
        location.utf8.count <= 256 && ["device:", "swtpm:", "mssim:", "tabrmd:"].contains(where: location.hasPrefix)
            && location.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F }
    }

    /// The TPM a `latchkey pam helper` or `pam test` run must use: the `tpm` of the
    /// configuration its arguments name (`--config`, else the default), when that file is
    /// one to believe and names one. Read before anything else runs (``TPMEnvironment``);
    /// any problem with the file is left for the command itself to report.
    static func tpmLocation(forArguments arguments: [String]) -> String? {
        let words = Array(arguments.dropFirst())
        guard words.count >= 2, words[0] == "pam", ["helper", "test"].contains(words[1]) else { return nil }
        var path = defaultPath
        if let index = words.firstIndex(of: "--config"), index + 1 < words.count { path = words[index + 1] }
        if let given = words.first(where: { $0.hasPrefix("--config=") }) { path = String(given.dropFirst("--config=".count)) }
        return (try? load(path))?.tpm
    }

    /// The identities whose approval lets `user` in.
    func identities(for user: String) -> [String] {
        if let mapped = maps[user] { return mapped }
        return user == "root" ? [] : [user]
    }

    /// Reads and checks the file at `path`.
    static func load(_ path: String) throws -> PAMConfiguration {
        let data = try TrustedFile.read(path, what: "the configuration", maximumSize: maximumSize)
        return try parse(String(decoding: data, as: UTF8.self), path: path)
    }

    /// Checks that the vault key file is root's and private; the vault reads it itself.
    func checkVaultKeyFile() throws {
        try TrustedFile.open(vaultKeyFile.path, what: "the vault key file", secret: true, maximumSize: Self.maximumSize) { _, _ in }
    }

    static func parse(_ text: String, path: String = defaultPath) throws -> PAMConfiguration {
        var values: [String: String] = [:]
        var maps: [String: [String]] = [:]
        for line in try KeyValueLine.parse(text, path: path, maximumValueLength: 1024) {
            let (key, value) = (line.key, line.value)
            func refuse(_ why: String) -> CommandFailure { line.refusal(why, path: path) }
            if key.hasPrefix("map ") {
                let user = key.dropFirst(4).trimmingSpaces()
                guard !user.isEmpty, !user.contains(" ") else { throw refuse("`map USER = IDENTITY`") }
                maps[user, default: []].append(value)
                continue
            }
            guard ["issuer", "client-id", "vault", "vault-key-file", "timeout", "prompt-services", "tpm"].contains(key) else {
                throw refuse("unknown key \(key.displaySafe(maximumLength: 64))")
            }
            guard values[key] == nil else { throw refuse("\(key) given twice") }
            values[key] = value
        }
        func required(_ key: String) throws -> String {
            guard let value = values[key] else { throw CommandFailure("\(path.displaySafe(maximumLength: 256)) names no \(key)") }
            return value
        }
        guard let issuer = URL(string: try required("issuer")), issuer.scheme == "https" || issuer.scheme == "http", issuer.host != nil else {
            throw CommandFailure("\(path.displaySafe(maximumLength: 256)): issuer is not an http(s) URL")
        }
        func absolute(_ key: String) throws -> URL {
            let value = try required(key)
            guard value.hasPrefix("/") else { throw CommandFailure("\(path.displaySafe(maximumLength: 256)): \(key) must be an absolute path") }
            return URL(fileURLWithPath: value)
        }
        var configuration = PAMConfiguration(issuer: issuer, clientID: try required("client-id"), vault: try absolute("vault"), vaultKeyFile: try absolute("vault-key-file"))
        configuration.maps = maps
        if let timeout = values["timeout"] {
            guard let seconds = Int(timeout), timeouts.contains(seconds) else {
                throw CommandFailure("\(path.displaySafe(maximumLength: 256)): timeout is \(timeouts.lowerBound) to \(timeouts.upperBound) seconds")
            }
            configuration.timeout = seconds
        }
        if let services = values["prompt-services"] {
            configuration.promptServices = Set(services.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init))
        }
        if let tpm = values["tpm"] {
            guard isTPMLocation(tpm) else {
                throw CommandFailure("\(path.displaySafe(maximumLength: 256)): tpm is a TCTI: device:/dev/tpmrm0, swtpm:host=…,port=…, mssim:… or tabrmd:…")
            }
            configuration.tpm = tpm
        }
        return configuration
    }

    /// The file `latchkey pam enroll` writes.
    func rendered() -> String {
        var lines = [
            "# latchkey pam: who may approve sign-ins to this host (docs/guides/pam.md)",
            "issuer = \(issuer.absoluteString)",
            "client-id = \(clientID)",
            "vault = \(vault.path)",
            "vault-key-file = \(vaultKeyFile.path)",
            "timeout = \(timeout)",
            "prompt-services = \(promptServices.sorted().joined(separator: " "))",
        ] + (tpm.map { ["# The TPM that holds this host's client key:", "tpm = \($0)"] } ?? []) + [
            "# A PAM user is approved by the identity of the same username; root by no one unless mapped:",
            "# map root = ada",
        ]
        for (user, identities) in maps.sorted(by: { $0.key < $1.key }) {
            lines += identities.map { "map \(user) = \($0)" }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
