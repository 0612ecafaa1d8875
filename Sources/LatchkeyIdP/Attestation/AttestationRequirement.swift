/// An attestation a registration must carry (docs/SECURITY.md, "Proving keys live in the
/// TPM"): provider-wide (``ProviderConfiguration/requiredAttestation``) or for one identity
/// (`admin create-identity --require-attestation tpm`).
public enum AttestationRequirement: String, Sendable, Hashable, CaseIterable {
    /// WebAuthn `tpm` attestation (L3 §8.3) whose AIK certificate chains to a configured
    /// root: the credential key was made in, and cannot leave, a TPM the CA checked.
    case tpm
}
