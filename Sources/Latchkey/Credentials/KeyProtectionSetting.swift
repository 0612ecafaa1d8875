public import LatchkeyCrypto

/// Where new credentials keep their private keys (``Embedded/Configuration/keyProtection``;
/// docs/SECURITY.md, "Keys in the TPM").
public enum KeyProtectionSetting: String, Sendable, Hashable, CaseIterable {
    /// In the vault file, sealed under the vault key (`KeyProtection.software`).
    case software
    /// In the host's TPM (`KeyProtection.tpm`); creating a credential fails with
    /// ``LatchkeyError/Code/tpmUnavailable`` when no TPM answers.
    case tpm
    /// In the TPM when one answers (where `TPM2OPENSSL_TCTI` points, by default
    /// `/dev/tpmrm0`), in software otherwise. ``Embedded/keyProtectionForNewCredentials()``
    /// says which and why.
    case automatic
}

/// What the setting chose for the next credential, and why, in words for the user.
public struct KeyProtectionChoice: Sendable, Hashable {
    public var protection: KeyProtection
    public var reason: String
}
