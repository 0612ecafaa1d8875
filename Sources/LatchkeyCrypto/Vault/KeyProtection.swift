/// Where a vault key's private half lives (docs/SECURITY.md, "Keys in the TPM").
public enum KeyProtection: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// In the vault file, PKCS#8 sealed under the vault key: whoever has the vault and its
    /// key (passphrase, key file, credential) has the private key.
    case software
    /// Inside the host's TPM: the vault keeps only the TPM-wrapped blob, sealed like any
    /// record, and only that TPM can sign with it. ES256 only.
    case tpm

    public var description: String { rawValue }
}
