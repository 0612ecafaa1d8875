import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey
import LatchkeyCrypto
import LatchkeyLogging
import Logging

/// Options every credential command takes: where the vault is, where its key comes from,
/// and how to print.
struct StoreOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The vault directory (default: $LATCHKEY_STORE, else $XDG_DATA_HOME/latchkey).", valueName: "dir"))
    var store: String?

    @Option(help: ArgumentHelp("A file holding the vault passphrase (default: $LATCHKEY_PASSPHRASE, a systemd credential, or a prompt on a terminal).", valueName: "file"))
    var passphraseFile: String?

    @Option(help: ArgumentHelp(
        "Where the vault key comes from: auto (--passphrase-file, $LATCHKEY_PASSPHRASE, the systemd credential, or a prompt) or tpm (sealed by this host's TPM: no passphrase; give it when the vault is created and opened). Default: $LATCHKEY_VAULT_KEY, else auto.",
        valueName: "auto|tpm"
    ))
    var vaultKey: VaultKeyChoice?

    enum VaultKeyChoice: String, ExpressibleByArgument, CaseIterable {
        case auto, tpm
    }

    @Flag(help: "Print JSON.")
    var json = false

    @Flag(name: [.customShort("v"), .long], help: "Say on stderr how the vault is reached: through the agent at $LATCHKEY_AGENT_SOCK, or opened directly, and why.")
    var verbose = false

    @Flag(help: "Create a new vault even with a weak passphrase (under 12 characters, or a repeated character, a sequence, a common password).")
    var allowWeakPassphrase = false

    @Option(help: ArgumentHelp("Seconds a command may spend waiting on the provider, all its requests together; one request gets at most 30 of them (default: 120).", valueName: "seconds"))
    var timeout: Int?

    mutating func validate() throws {
        if let timeout, !(1...3600).contains(timeout) {
            throw ValidationError("--timeout takes 1 to 3600 seconds")
        }
        if vaultKey == nil, let text = ProcessInfo.processInfo.environment["LATCHKEY_VAULT_KEY"], !text.isEmpty {
            guard let choice = VaultKeyChoice(rawValue: text) else { throw ValidationError("LATCHKEY_VAULT_KEY is auto or tpm") }
            vaultKey = choice
        }
        if vaultKey == .tpm, passphraseFile != nil {
            throw ValidationError("--vault-key tpm takes no passphrase file: the TPM holds the vault key")
        }
    }

    /// The systemd credential (`LoadCredential=latchkey-vault-key:<file>`) holding a raw
    /// 32-byte vault key.
    static let systemdCredentialName = "latchkey-vault-key"

    var directory: URL {
        if let store { return URL(fileURLWithPath: store) }
        if let store = ProcessInfo.processInfo.environment["LATCHKEY_STORE"], !store.isEmpty { return URL(fileURLWithPath: store) }
        return KeyVault.defaultDirectory
    }

    /// `--vault-key tpm`; else `--passphrase-file`, then `$LATCHKEY_PASSPHRASE`, then the
    /// systemd credential, then a prompt (only on a terminal).
    func keySource() throws -> VaultKeySource {
        if vaultKey == .tpm { return .tpm }
        if let passphraseFile {
            // Like a key file: a passphrase others can read is no secret (docs/SECURITY.md,
            // "The vault"). The mode is checked on the descriptor the bytes are read from.
            var data = try SecretFile.read(passphraseFile)
            // The file's bytes are wiped once the passphrase is taken from them.
            defer { data.resetBytes(in: data.startIndex..<data.endIndex) }
            var text = String(decoding: data, as: UTF8.self)
            if text.hasSuffix("\n") { text.removeLast() }
            if text.hasSuffix("\r") { text.removeLast() }
            return .passphrase(text)
        }
        let environment = ProcessInfo.processInfo.environment
        if let passphrase = environment["LATCHKEY_PASSPHRASE"], !passphrase.isEmpty {
            return .passphrase(passphrase)
        }
        if let credentials = environment["CREDENTIALS_DIRECTORY"], !credentials.isEmpty,
           FileManager.default.fileExists(atPath: credentials + "/" + Self.systemdCredentialName) {
            return .systemdCredential(name: Self.systemdCredentialName)
        }
        guard Terminal.isInteractive else {
            throw CommandFailure(
                "the vault needs its key: set LATCHKEY_PASSPHRASE, pass --passphrase-file, run under systemd with LoadCredential=\(Self.systemdCredentialName):<file>, or use --vault-key tpm for a vault sealed by this host's TPM"
            )
        }
        let isNew = !FileManager.default.fileExists(atPath: directory.appendingPathComponent("vault.json").path)
        guard let passphrase = Terminal.readSecret(isNew ? "New vault passphrase: " : "Vault passphrase: "), !passphrase.isEmpty else {
            throw CommandFailure("no passphrase given")
        }
        if isNew, Terminal.readSecret("Repeat the passphrase: ") != passphrase {
            throw CommandFailure("the passphrases differ; nothing was created")
        }
        return .passphrase(passphrase)
    }

    /// The facade over this vault, allowed to talk to `hosts` only. It logs warnings and
    /// errors only, unless `$LATCHKEY_LOG_LEVEL` asks for more (`info`, `debug`, `trace`).
    func embedded(
        allowing hosts: [String] = [], answers: StepAnswers? = nil, keyProtection: KeyProtectionSetting = .software, signInFlow: SignInFlow = .automatic,
        attestation: CredentialAttestation = .none
    ) throws -> Embedded {
        try embedded(allowing: hosts, stepHandler: answers?.handler(), keyProtection: keyProtection, signInFlow: signInFlow, attestation: attestation)
    }

    func embedded(
        allowing hosts: [String], stepHandler: Embedded.StepHandler?, keyProtection: KeyProtectionSetting = .software, signInFlow: SignInFlow = .automatic,
        attestation: CredentialAttestation = .none
    ) throws -> Embedded {
        // Text from providers reaches these logs: escaped as the provider's own are.
        var logger = Logger(label: "latchkey") { TextLogHandler(label: $0) }
        logger.logLevel = ProcessInfo.processInfo.environment["LATCHKEY_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
        // The key source is asked for (a prompt, a file) only if no agent holds the vault.
        let options = self
        var configuration = Embedded.Configuration(
            vaultDirectory: directory,
            keySource: .deferred { try options.keySource() },
            allowedDomains: hosts,
            stepHandler: stepHandler,
            logger: logger
        )
        configuration.allowsWeakPassphrase = allowWeakPassphrase
        configuration.keyProtection = keyProtection
        configuration.attestation = attestation
        configuration.signInFlow = signInFlow
        if let timeout {
            configuration.flowTimeout = .seconds(timeout)
            configuration.requestTimeout = min(configuration.requestTimeout, .seconds(timeout))
        }
        configuration.agentSocket = Self.agentSocket
        let embedded = try Embedded(configuration: configuration)
        if verbose { TextOutput.error("latchkey: vault \(embedded.vaultAccess)") }
        return embedded
    }

    /// `$LATCHKEY_AGENT_SOCK`, the agent's socket as `latchkey agent` printed it.
    static var agentSocket: String? {
        ProcessInfo.processInfo.environment["LATCHKEY_AGENT_SOCK"].flatMap { $0.isEmpty ? nil : $0 }
    }
}
