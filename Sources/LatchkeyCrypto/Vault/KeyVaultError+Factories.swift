// One factory per ``KeyVaultError/Code``, as swift-certificates' `CertificateError` has: a call
// site names the kind of failure first and cannot pair a reason with the wrong code.
extension KeyVaultError {
    /// The passphrase or key does not open this vault.
    public static func wrongKey(
        reason: String, handle: KeyHandle? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> KeyVaultError {
        KeyVaultError(code: .wrongKey, reason: reason, handle: handle, underlying: underlying, file: file, line: line)
    }

    /// A new vault's passphrase is too short or too easy to guess
    /// (``VaultKeySource/weakness(ofPassphrase:)``).
    public static func weakPassphrase(
        reason: String, handle: KeyHandle? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> KeyVaultError {
        KeyVaultError(code: .weakPassphrase, reason: reason, handle: handle, underlying: underlying, file: file, line: line)
    }

    /// The vault was made with another kind of key source (a passphrase vault opened
    /// with a key file, or the reverse).
    public static func keySourceMismatch(
        reason: String, handle: KeyHandle? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> KeyVaultError {
        KeyVaultError(code: .keySourceMismatch, reason: reason, handle: handle, underlying: underlying, file: file, line: line)
    }

    /// The key source cannot be read: missing key file, unset `CREDENTIALS_DIRECTORY`,
    /// a key of the wrong length.
    public static func keySourceUnavailable(
        reason: String, handle: KeyHandle? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> KeyVaultError {
        KeyVaultError(code: .keySourceUnavailable, reason: reason, handle: handle, underlying: underlying, file: file, line: line)
    }

    /// A vault directory or file, or a key file, is accessible by group or others.
    public static func insecurePermissions(
        reason: String, handle: KeyHandle? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> KeyVaultError {
        KeyVaultError(code: .insecurePermissions, reason: reason, handle: handle, underlying: underlying, file: file, line: line)
    }

    /// The vault or a record was written by a newer Latchkey (or is not a version this
    /// one knows); it is left untouched.
    public static func unsupportedFormat(
        reason: String, handle: KeyHandle? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> KeyVaultError {
        KeyVaultError(code: .unsupportedFormat, reason: reason, handle: handle, underlying: underlying, file: file, line: line)
    }

    /// The directory holds something that is not a Latchkey vault.
    public static func notAVault(
        reason: String, handle: KeyHandle? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> KeyVaultError {
        KeyVaultError(code: .notAVault, reason: reason, handle: handle, underlying: underlying, file: file, line: line)
    }

    /// A record that fails to parse, authenticate or decrypt: edited, truncated, moved
    /// to another handle, or damaged.
    public static func corruptRecord(
        reason: String, handle: KeyHandle? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> KeyVaultError {
        KeyVaultError(code: .corruptRecord, reason: reason, handle: handle, underlying: underlying, file: file, line: line)
    }

    /// No key with this handle.
    public static func keyNotFound(
        reason: String, handle: KeyHandle? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> KeyVaultError {
        KeyVaultError(code: .keyNotFound, reason: reason, handle: handle, underlying: underlying, file: file, line: line)
    }

    /// A handle that is not one the vault could have issued.
    public static func invalidHandle(
        reason: String, handle: KeyHandle? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> KeyVaultError {
        KeyVaultError(code: .invalidHandle, reason: reason, handle: handle, underlying: underlying, file: file, line: line)
    }

    /// Metadata over ``KeyVault/maximumMetadataByteCount``.
    public static func metadataTooLarge(
        reason: String, handle: KeyHandle? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> KeyVaultError {
        KeyVaultError(code: .metadataTooLarge, reason: reason, handle: handle, underlying: underlying, file: file, line: line)
    }

    /// The file system refused an operation (the reason has the path and errno text).
    public static func fileSystem(
        reason: String, handle: KeyHandle? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> KeyVaultError {
        KeyVaultError(code: .fileSystem, reason: reason, handle: handle, underlying: underlying, file: file, line: line)
    }

    /// No TPM answers where `TPM2OPENSSL_TCTI` (default `/dev/tpmrm0`) points, it is
    /// busy, it stopped answering, or OpenSSL's tpm2 provider is not installed. The
    /// record or vault is untouched and works again once the TPM answers.
    public static func tpmUnavailable(
        reason: String, handle: KeyHandle? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> KeyVaultError {
        KeyVaultError(code: .tpmUnavailable, reason: reason, handle: handle, underlying: underlying, file: file, line: line)
    }

    /// The TPM answers but cannot load this key or vault key: it was made by another
    /// TPM, or before this one was cleared. Nothing is deleted; only that TPM can use it.
    public static func wrongTPM(
        reason: String, handle: KeyHandle? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> KeyVaultError {
        KeyVaultError(code: .wrongTPM, reason: reason, handle: handle, underlying: underlying, file: file, line: line)
    }

    /// The key protection cannot hold this algorithm (a TPM has no Ed25519).
    public static func unsupportedProtection(
        reason: String, handle: KeyHandle? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> KeyVaultError {
        KeyVaultError(code: .unsupportedProtection, reason: reason, handle: handle, underlying: underlying, file: file, line: line)
    }

    /// The metadata changed between reading it and writing it back.
    public static func metadataChanged(
        reason: String, handle: KeyHandle? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> KeyVaultError {
        KeyVaultError(code: .metadataChanged, reason: reason, handle: handle, underlying: underlying, file: file, line: line)
    }

    /// The key agent holding the vault did not answer, is locked, or refused.
    public static func agentUnavailable(
        reason: String, handle: KeyHandle? = nil, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> KeyVaultError {
        KeyVaultError(code: .agentUnavailable, reason: reason, handle: handle, underlying: underlying, file: file, line: line)
    }
}
