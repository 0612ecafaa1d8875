public import LatchkeyOAuth

/// The `error` member of an error answer: the OAuth codes (``OAuthErrorCode``, declared
/// once in LatchkeyOAuth for both sides) and Latchkey's own, below (docs/PROTOCOL.md,
/// "Error codes"). An open set: a provider may send a code this client does not know, and
/// it is kept as sent.
public typealias ErrorCode = OAuthErrorCode

extension OAuthErrorCode {
    /// A wrong one-time code (a `verify-code` step, a transfer code); the client may ask again.
    public static let invalidCode = OAuthErrorCode(rawValue: "invalid_code")
    /// The credential was revoked at the provider; the client marks it revoked in its vault.
    public static let credentialRevoked = OAuthErrorCode(rawValue: "credential_revoked")
    /// No such credential, or not one usable for this request.
    public static let invalidCredential = OAuthErrorCode(rawValue: "invalid_credential")
    /// A sign-up profile field is missing or malformed.
    public static let invalidProfile = OAuthErrorCode(rawValue: "invalid_profile")
    /// The job, session, transfer or flow does not exist (any more).
    public static let notFound = OAuthErrorCode(rawValue: "not_found")
    /// A WebAuthn assertion that does not verify (signature, challenge, origin, counter).
    public static let invalidAssertion = OAuthErrorCode(rawValue: "invalid_assertion")
    /// A WebAuthn registration that does not verify, or one the job does not take.
    public static let invalidRegistration = OAuthErrorCode(rawValue: "invalid_registration")
    /// The name or thing asked for is taken (a username, or one that looks like it).
    public static let conflict = OAuthErrorCode(rawValue: "conflict")
    /// A username a Linux host keeps for its own accounts (`root`, Debian's base-passwd
    /// names, names the operator added, and names that look like them): no identity may
    /// take it (docs/SECURITY.md, "Reserved names").
    public static let reservedUsername = OAuthErrorCode(rawValue: "reserved_username")
    /// A user or group name a POSIX host cannot take (section 14): not 1 to 32 bytes of
    /// lower-case letters, digits, `_`, `.` and `-`, starting with a letter or `_`; or a
    /// shell, home or GECOS value a passwd line cannot hold.
    public static let invalidPOSIXName = OAuthErrorCode(rawValue: "invalid_posix_name")
    /// The provider's POSIX ID range (`serve --posix-uid-range`) has no ID left: IDs are
    /// never reused, so the range must be widened (section 14).
    public static let posixIDsExhausted = OAuthErrorCode(rawValue: "posix_ids_exhausted")
    /// The host directory changed while a host walked its pages: start again from the
    /// first page (section 14).
    public static let directoryChanged = OAuthErrorCode(rawValue: "directory_changed")
    /// An endorsement key certificate that does not chain to the TPM makers' roots the
    /// attestation CA trusts, or an attestation key that is not a restricted signing key
    /// of a TPM (section 10).
    public static let invalidEndorsement = OAuthErrorCode(rawValue: "invalid_endorsement")
    /// A credential activation that is unknown, expired, already used, or answered with
    /// the wrong secret (section 10).
    public static let invalidActivation = OAuthErrorCode(rawValue: "invalid_activation")
    /// A registration without the attestation the provider or the identity demands
    /// (`serve --require-attestation tpm`, `admin create-identity --require-attestation
    /// tpm`; section 10): register a TPM key with `tpm` attestation.
    public static let attestationRequired = OAuthErrorCode(rawValue: "attestation_required")
    /// An SSH key the provider does not certify: not `ecdsa-sha2-nistp256` or
    /// `ssh-ed25519`, malformed, or already certified for someone else (section 12).
    public static let invalidSSHKey = OAuthErrorCode(rawValue: "invalid_ssh_key")
    /// A certificate request whose proof of the SSH key does not verify, is stale, or was
    /// used before (section 12).
    public static let invalidSSHProof = OAuthErrorCode(rawValue: "invalid_ssh_proof")
    /// A principal the identity or client was not granted (section 12).
    public static let principalNotGranted = OAuthErrorCode(rawValue: "principal_not_granted")
    /// RFC 9396 §5: `authorization_details` the provider cannot take (a type it does not
    /// know, a malformed or oversized detail, or one sent by a client that did not
    /// authenticate; section 13).
    public static let invalidAuthorizationDetails = OAuthErrorCode(rawValue: "invalid_authorization_details")
}
