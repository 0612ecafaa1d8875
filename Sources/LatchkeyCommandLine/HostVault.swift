import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Latchkey
import LatchkeyCrypto
import LatchkeyLogging
import Logging

/// The host's own vault, shared by `latchkey pam` and `latchkey host`: a root-only folder
/// and key file holding the host's client key (one key a provider and client id, made by
/// whichever enrolment comes first).
enum HostVault {
    /// The facade over the vault: the provider's host only, no agent, no prompts. The PAM
    /// helper keeps no tokens (it runs once); the host daemon keeps its client credentials
    /// tokens between syncs.
    static func embedded(
        issuer: URL, vault: URL, vaultKeyFile: URL, keyProtection: KeyProtectionSetting = .software, cachesTokens: Bool, logger: Logger
    ) throws -> Embedded {
        var settings = Embedded.Configuration(
            vaultDirectory: vault, keySource: .keyFile(vaultKeyFile), allowedDomains: [issuer.host ?? ""], stepHandler: nil, logger: logger
        )
        settings.cachesTokens = cachesTokens
        settings.agentSocket = nil
        settings.keyProtection = keyProtection
        return try Embedded(configuration: settings)
    }

    /// A logger that says nothing below critical: the enrolments and the PAM helper report
    /// through their own lines.
    static func quietLogger(_ label: String) -> Logger {
        var logger = Logger(label: label) { TextLogHandler(label: $0) }
        logger.logLevel = .critical
        return logger
    }

    /// The vault folder, its key file and the client key for `clientID` at `issuer`, each
    /// made when missing. Answers the key, and for a key in the TPM the TPM to record in
    /// the configuration (the PAM helper and the daemon get no `TPM2OPENSSL_TCTI` from
    /// whoever starts them).
    static func enroll(
        issuer: URL, clientID: String, vault: URL, vaultKeyFile: URL, keyProtection: KeyProtectionSetting
    ) async throws -> (key: ClientKey, tpm: String?) {
        try FileManager.default.createDirectory(at: vault, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(at: vaultKeyFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        try makeKeyFile(vaultKeyFile)
        let embedded = try embedded(
            issuer: issuer, vault: vault, vaultKeyFile: vaultKeyFile, keyProtection: keyProtection, cachesTokens: false, logger: quietLogger("latchkey-enroll")
        )
        let key = try await embedded.clientKey(issuer: issuer, clientID: clientID)
        let tpm = key.keyProtection == .tpm && PAMConfiguration.isTPMLocation(TPM.configuredLocation) ? TPM.configuredLocation : nil
        return (key, tpm)
    }

    /// Writes a new configuration file (0644); an existing one is left alone.
    static func writeConfiguration(_ text: String, to path: String) throws {
        guard !FileManager.default.fileExists(atPath: path) else { return }
        try FileManager.default.createDirectory(at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o644]) else {
            throw CommandFailure("cannot write \(path)")
        }
    }

    /// The JWK Set on stdout, and on stderr how to register it (`register` is the
    /// `admin create-client` arguments after `--name`) and what follows.
    static func printRegistration(_ key: ClientKey, issuer: URL, clientID: String, config: String, register: String, then: [String] = []) {
        TextOutput.line(String(decoding: key.publicJWKSet, as: UTF8.self))
        Terminal.note("This host's client key for \(TextOutput.field(clientID)) (kid \(key.keyID), \(key.keyProtection)); configuration in \(config).")
        Terminal.note("Register it (the JWK Set above on standard input)\(then.isEmpty ? "" : ", then:")")
        Terminal.note("  latchkey admin create-client --idp \(issuer.absoluteString) --client-id \(clientID) --name \"$(hostname)\" \(register) --jwks -")
        for line in then { Terminal.note("  " + line) }
    }

    /// 32 random bytes, owner-only, made once: an existing file is kept as it is.
    static func makeKeyFile(_ url: URL) throws {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if descriptor < 0, errno == EEXIST { return }
        guard descriptor >= 0 else { throw CommandFailure("cannot make \(url.path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var bytes = try SecureRandom.bytes(count: 32)
        defer { bytes.resetBytes(in: 0..<bytes.count) }
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == 32, fsync(descriptor) == 0 else { throw CommandFailure("cannot write \(url.path)") }
    }
}

/// What `latchkey pam enroll` and `latchkey host enroll` both take: the provider, the
/// host's client id, the shared vault and where its key is kept.
struct HostEnrollmentOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The identity provider (issuer) URL.", valueName: "url"))
    var issuer: String

    @Option(help: ArgumentHelp("This host's client id at the provider (letters, digits, -._:).", valueName: "id"))
    var clientID: String

    @Option(help: ArgumentHelp("The host's vault directory (shared by latchkey pam and latchkey host).", valueName: "directory"))
    var vault: String = "/var/lib/latchkey/pam"

    @Option(help: ArgumentHelp("The vault's key file (32 random bytes, made when missing).", valueName: "file"))
    var vaultKeyFile: String = "/etc/latchkey/pam-vault.key"

    @OptionGroup var protection: KeyProtectionOptions

    func validate() throws {
        guard !clientID.isEmpty, clientID.utf8.count <= 128,
              clientID.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-._:".unicodeScalars.contains($0)) })
        else { throw ValidationError("--client-id: 1 to 128 letters, digits or -._:") }
        for (name, path) in [("--vault", vault), ("--vault-key-file", vaultKeyFile)] where !path.hasPrefix("/") {
            throw ValidationError("\(name) must be an absolute path")
        }
    }

    func issuerURL() throws -> URL {
        try LatchkeyCommand.ClientOptions.issuer(issuer).0
    }

    var vaultURL: URL { URL(fileURLWithPath: vault) }
    var vaultKeyURL: URL { URL(fileURLWithPath: vaultKeyFile) }
}
