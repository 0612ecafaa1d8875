/// An error from the ``KeyVault``.
///
/// Shaped like ``CryptoError`` (and swift-certificates' errors): an open-ended ``code`` to
/// match on and a ``reason`` that says what happened and, where there is one, the fix.
/// Paths appear in reasons; key material, passphrases and metadata never do.
public struct KeyVaultError: LatchkeyErrorTemplate, Sendable {
    public var code: Code
    public var reason: String
    /// The record concerned, when the error is about one.
    public var handle: KeyHandle?
    /// The error underneath, when there is one (a ``CryptoError`` from the TPM, with
    /// OpenSSL's error queue).
    public var underlying: (any Error)?
    public var file: String
    public var line: UInt

    public init(
        code: Code, reason: String, handle: KeyHandle? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) {
        self.code = code
        self.reason = reason
        self.handle = handle
        self.underlying = underlying
        self.file = file
        self.line = line
    }

    /// A TPM's ``CryptoError`` as the vault reports it: ``Code/tpmUnavailable`` (no TPM
    /// answers: nothing is wrong with the record) or ``Code/wrongTPM`` (this TPM cannot
    /// load the key or vault key: another TPM's, or this one was cleared).
    init(tpm error: CryptoError, handle: KeyHandle? = nil, file: String = #fileID, line: UInt = #line) {
        let subject = handle.map { "key \($0)" } ?? "the vault key"
        // What the provider and the TSS said (no secret: response codes and step names),
        // unless the reason quotes it already.
        var error = error
        let said = error.openSSLErrors.map(\.message).filter { !error.reason.contains($0) }
        if !said.isEmpty { error.reason += " [" + said.prefix(4).joined(separator: "; ") + "]" }
        switch error.code {
        case .tpmKeyUnusable:
            self.init(
                code: .wrongTPM,
                reason: "\(subject) is held by another TPM, or this TPM was cleared since it was made: \(error.reason); the record is kept",
                handle: handle, underlying: error, file: file, line: line
            )
        case .tpmUnavailable:
            self.init(code: .tpmUnavailable, reason: error.reason, handle: handle, underlying: error, file: file, line: line)
        default:
            self.init(code: .tpmUnavailable, reason: "the TPM failed: \(error.reason)", handle: handle, underlying: error, file: file, line: line)
        }
    }

    package var details: String? {
        handle.map { "key \($0)" }
    }
}

extension KeyVaultError {
    /// The kind of a ``KeyVaultError``. Open-ended: switch statements need a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String

        private init(_ name: String) {
            self.name = name
        }

        /// The passphrase or key does not open this vault.
        public static let wrongKey = Code("wrongKey")
        /// A new vault's passphrase is too short or too easy to guess
        /// (``VaultKeySource/weakness(ofPassphrase:)``).
        public static let weakPassphrase = Code("weakPassphrase")
        /// The vault was made with another kind of key source (a passphrase vault opened
        /// with a key file, or the reverse).
        public static let keySourceMismatch = Code("keySourceMismatch")
        /// The key source cannot be read: missing key file, unset `CREDENTIALS_DIRECTORY`,
        /// a key of the wrong length.
        public static let keySourceUnavailable = Code("keySourceUnavailable")
        /// A vault directory or file, or a key file, is accessible by group or others.
        public static let insecurePermissions = Code("insecurePermissions")
        /// The vault or a record was written by a newer Latchkey (or is not a version this
        /// one knows); it is left untouched.
        public static let unsupportedFormat = Code("unsupportedFormat")
        /// The directory holds something that is not a Latchkey vault.
        public static let notAVault = Code("notAVault")
        /// A record that fails to parse, authenticate or decrypt: edited, truncated, moved
        /// to another handle, or damaged.
        public static let corruptRecord = Code("corruptRecord")
        /// No key with this handle.
        public static let keyNotFound = Code("keyNotFound")
        /// A handle that is not one the vault could have issued.
        public static let invalidHandle = Code("invalidHandle")
        /// Metadata over ``KeyVault/maximumMetadataByteCount``.
        public static let metadataTooLarge = Code("metadataTooLarge")
        /// The file system refused an operation (the reason has the path and errno text).
        public static let fileSystem = Code("fileSystem")
        /// No TPM answers where `TPM2OPENSSL_TCTI` (default `/dev/tpmrm0`) points, it is
        /// busy, it stopped answering, or OpenSSL's tpm2 provider is not installed. The
        /// record or vault is untouched and works again once the TPM answers.
        public static let tpmUnavailable = Code("tpmUnavailable")
        /// The TPM answers but cannot load this key or vault key: it was made by another
        /// TPM, or before this one was cleared. Nothing is deleted; only that TPM can use it.
        public static let wrongTPM = Code("wrongTPM")
        /// The key protection cannot hold this algorithm (a TPM has no Ed25519).
        public static let unsupportedProtection = Code("unsupportedProtection")
        /// The metadata changed between reading it and writing it back (another writer
        /// came first); read again and retry.
        public static let metadataChanged = Code("metadataChanged")
        /// The key agent holding the vault (`latchkey agent`) did not answer, answered
        /// something malformed, is locked, or refused the operation (an agent never sends
        /// key material). Nothing changed in the vault that the reason does not name.
        public static let agentUnavailable = Code("agentUnavailable")

        /// The code named `name`, as an agent sends it: codes are open-ended, so one this
        /// version does not know is kept as it is.
        package static func named(_ name: String) -> Code {
            Code(name)
        }

        public var description: String { name }
    }
}
