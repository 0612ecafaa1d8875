#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Where the vault key comes from.
///
/// A passphrase is stretched with scrypt (parameters and salt live in the vault's header,
/// so they can be raised later); a key file or a systemd credential supplies 32 random
/// bytes directly. Either way the vault derives separate sealing, integrity and key-check
/// keys from it with HKDF-SHA-256, so no derived value reveals another.
public enum VaultKeySource: Sendable {
    /// A passphrase, stretched with scrypt. `scrypt` applies only when the vault is created;
    /// an existing vault uses the parameters in its header.
    case passphrase(String, scrypt: Scrypt.Parameters = .interactive)
    /// A file holding exactly 32 random bytes, readable by its owner only
    /// (`head -c 32 /dev/urandom > key && chmod 600 key`).
    case keyFile(URL)
    /// A systemd credential: the file `$CREDENTIALS_DIRECTORY/<name>` (systemd.exec
    /// `LoadCredential=` / `SetCredentialEncrypted=`), holding 32 random bytes.
    case systemdCredential(name: String)
    /// A random key sealed by the host's TPM (``TPM/system()``) and kept, sealed, in the
    /// vault's header: the vault opens on this host with nothing else, and a copy of it
    /// opens nowhere else (docs/SECURITY.md, "Keys in the TPM"; how: ``TPMSealedVaultKey``).
    case tpm
    /// A source decided only if the vault is opened in this process: a command that finds
    /// a key agent holding the vault (docs/SECURITY.md, "The key agent") never prompts for
    /// a passphrase it does not need. The closure runs at most once per open, and must not
    /// give another deferred source.
    case deferred(@Sendable () throws -> VaultKeySource)

    static let rawKeyByteCount = 32

    /// The fewest characters a new vault's passphrase may have. scrypt makes each guess
    /// cost (docs/SECURITY.md, "The vault"), but a one-letter passphrase falls in a few
    /// dozen guesses; twelve characters put even a lower-case-only passphrase past 10^16.
    public static let minimumPassphraseLength = 12

    /// The fewest bits (``SecretStrength``) a new vault's passphrase may be estimated at:
    /// twelve spaces, `aaaaaaaaaaaa`, `123456789012` or `passwordpass` are twelve
    /// characters a guesser tries in its first few thousand guesses. 36 bits is about
    /// 7·10^10 guesses, some 900 core-years at scrypt's cost; twelve random digits pass.
    public static let minimumPassphraseBits = 36.0

    /// Why `passphrase` is too weak for a new vault, or nil when it is not: too short, or
    /// built of what guessers try first (a repeated character or unit, a digit, alphabet
    /// or keyboard sequence, a common password with padding).
    public static func weakness(ofPassphrase passphrase: String) -> String? {
        let length = passphrase.count
        if length < minimumPassphraseLength {
            return "a new vault's passphrase needs at least \(minimumPassphraseLength) characters (this one has \(length))"
        }
        let estimate = SecretStrength.estimate(passphrase)
        guard estimate.bits < minimumPassphraseBits else { return nil }
        let found = estimate.patterns.isEmpty ? "" : " (\(estimate.patterns.joined(separator: ", ")))"
        return "a new vault's passphrase is too easy to guess: about \(Int(estimate.bits)) bits\(found), at least \(Int(minimumPassphraseBits)) are needed; use several uncommon words or random characters"
    }

    /// The header's name for the kind of key this source gives.
    var kind: VaultHeader.KeyKind {
        switch self {
        case .passphrase: .scrypt
        case .keyFile, .systemdCredential: .raw
        case .tpm: .tpm
        // Never asked: KeyVault.open resolves a deferred source first.
        case .deferred: .raw
        }
    }

    /// The source itself, a deferred one asked now.
    func resolved() throws -> VaultKeySource {
        guard case .deferred(let resolve) = self else { return self }
        let source = try resolve()
        if case .deferred = source {
            throw KeyVaultError.keySourceUnavailable(reason: "a deferred vault key source gave another deferred source")
        }
        return source
    }

    /// Stands in for `$CREDENTIALS_DIRECTORY` in the tests (empty: unset), so they need not
    /// change the process's environment while other tests start processes (a `setenv`
    /// racing with a `posix_spawn` that copies the environment can crash the latter).
    @TaskLocal static var credentialsDirectory: String?

    /// Reads a raw 32-byte key (key file or systemd credential).
    func rawKey() throws -> SymmetricKey {
        let url: URL
        switch self {
        case .passphrase, .tpm, .deferred:
            throw KeyVaultError.keySourceMismatch(reason: "a passphrase or TPM is not a raw key")
        case .keyFile(let file):
            url = file
        case .systemdCredential(let name):
            guard let directory = Self.credentialsDirectory ?? ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else {
                throw KeyVaultError.keySourceUnavailable(reason: "CREDENTIALS_DIRECTORY is not set: run under systemd with LoadCredential=\(name):<file> (or set it for testing)"
                )
            }
            guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
                throw KeyVaultError.keySourceUnavailable(reason: "invalid systemd credential name")
            }
            url = URL(fileURLWithPath: directory).appendingPathComponent(name)
        }
        // Only a key file we are told about is held to owner-only permissions; systemd
        // manages its credential directory's permissions itself.
        let isKeyFile = if case .keyFile = self { true } else { false }
        var bytes = try VaultFiles.readFile(
            url.path,
            maximumSize: 4096,
            requirePrivate: isKeyFile,
            missing: .keySourceUnavailable
        )
        defer { secureZero(&bytes) }
        guard bytes.count == Self.rawKeyByteCount else {
            throw KeyVaultError.keySourceUnavailable(reason: "\(url.path) holds \(bytes.count) bytes; a vault key is exactly 32 random bytes"
            )
        }
        return SymmetricKey(data: bytes)
    }
}
