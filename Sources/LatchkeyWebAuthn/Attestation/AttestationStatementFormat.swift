/// The attestation statement formats Latchkey makes and verifies (WebAuthn L3 §8, IANA
/// "WebAuthn Attestation Statement Format Identifiers"): the `fmt` of an attestation
/// object, one spelling for the authenticator, the relying party and the provider.
public enum AttestationStatementFormat: String, Sendable, CaseIterable {
    /// §8.7: no attestation; the statement is empty.
    case none
    /// §8.2: self attestation here (no certificate chain).
    case packed
    /// §8.3: a TPM's certification of the key.
    case tpm
}

/// What a relying party asks of attestation (WebAuthn L3 §5.4.7,
/// `AttestationConveyancePreference`): the `attestation` member of creation options.
public enum AttestationConveyancePreference: String, Sendable, CaseIterable {
    case none
    case indirect
    case direct
    case enterprise
}
