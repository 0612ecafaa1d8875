/// How tokens from a sign-in are held: as bearer tokens, usable by whoever holds them, or
/// bound to a key of this host with DPoP (RFC 9449), so a copied token is useless
/// without the key (docs/SECURITY.md, "Sender-constrained tokens (DPoP)").
public enum ProofOfPossession: String, Sendable, Hashable, CaseIterable {
    /// Bearer tokens (RFC 6750).
    case none
    /// Tokens bound to the credential's DPoP key: the authorization request carries its
    /// thumbprint (`dpop_jkt`, RFC 9449 §10), the code exchange and every refresh a proof
    /// of it (§5), and every use of the access token a proof with its hash (§7). A
    /// provider that answers with bearer tokens anyway is refused
    /// (``LatchkeyError/Code/dpopNotBound``).
    case dpop
}
