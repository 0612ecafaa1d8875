#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// How a new credential proves to the provider where its key lives
/// (``Embedded/Configuration/attestation``; docs/SECURITY.md, "Proving keys live in the
/// TPM").
public enum CredentialAttestation: Sendable, Hashable {
    /// No proof: `none` attestation, or `packed` self attestation when the provider asks
    /// for `direct` (which proves only that the key signed its own registration).
    case none
    /// WebAuthn `tpm` attestation (L3 §8.3): the key is made in the TPM and certified
    /// there by an attestation key (AK) whose AIK certificate comes from a Latchkey
    /// attestation CA (docs/PROTOCOL.md section 10): the one at `authority` (a provider's
    /// issuer URL, which must be in the allowed domains), or, when nil, the provider the
    /// credential is being bound at. The AK and its certificate are made once per TPM and
    /// CA and kept in the vault. Needs TPM key protection
    /// (``Embedded/Configuration/keyProtection`` `tpm`, or `automatic` with a TPM).
    case tpm(authority: URL? = nil)
}
