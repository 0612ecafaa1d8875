/// The endpoints of a Latchkey provider, relative to the issuer (docs/PROTOCOL.md). A
/// client calls the `v1/…` ones by itself and learns the OAuth ones from discovery; every
/// other URL it calls is named in a provider's answer (`submit`, `status`, …) and checked
/// to be on the provider's origin.
public enum ProtocolPath {
    /// OpenID Connect Discovery 1.0 §4 (section 1).
    public static let discovery = ".well-known/openid-configuration"
    /// OAuth 2.0 Authorization Server Metadata, RFC 8414 §3: the same document, where
    /// OAuth clients (MCP's among them) look first (section 1). The issuer has no path,
    /// so the well-known suffix follows the origin directly (§3.1).
    public static let authorizationServerMetadata = ".well-known/oauth-authorization-server"
    /// Dynamic client registration, RFC 7591 §3 (section 3, "Dynamic client
    /// registration"); `register/<client_id>` is a registration's own URI (RFC 7592 §2).
    public static let registration = "register"
    /// The provider's keys, RFC 7517 §5 (section 1).
    public static let jwks = "jwks"
    /// RFC 6749 §3.1 (section 3).
    public static let authorization = "authorize"
    /// RFC 6749 §3.2 (section 3).
    public static let token = "token"
    /// OIDC Core §5.3 (section 3).
    public static let userInfo = "userinfo"
    /// RFC 7009 §2 (section 3).
    public static let revocation = "revoke"
    /// Token introspection for resource servers (RFC 7662).
    public static let introspection = "introspect"
    /// RFC 8628 §3.1: a device starts the device authorization grant (section 7).
    public static let deviceAuthorization = "device_authorization"
    /// draft-ietf-oauth-first-party-apps-04 §4.1: the authorization challenge endpoint
    /// (section 8).
    public static let authorizationChallenge = "authorize-challenge"
    /// RFC 8628 §3.2's `verification_uri`: where a person enters the user code (section 7).
    public static let deviceVerification = "device"

    /// `POST`: an exporter starts a transfer (section 5).
    public static let transfers = "v1/transfers"
    /// `POST`: an importer redeems a transfer code (section 5).
    public static let transferRedemption = "v1/transfers/redeem"
    /// `POST`: self-service sign-up (section 6).
    public static let signUp = "v1/signup"
    /// `POST`: account recovery (section 6).
    public static let recovery = "v1/recovery"
    /// `GET v1/bind/<job>?token=`: a bind URL's path prefix (section 2).
    public static let bind = "v1/bind"
    /// `POST`: look up a user code to approve or deny; `POST v1/device/<session>`: the
    /// decision (section 7).
    public static let deviceApproval = "v1/device"
    /// `GET v1/authenticate/<session>`: an authenticate URL's path prefix (section 3).
    public static let authenticate = "v1/authenticate"

    /// `GET`: the attestation CA's root certificates, PEM (section 10).
    public static let attestationRoots = "v1/attestation/roots"
    /// `POST`: a TPM asks for a credential activation (section 10).
    public static let attestationActivations = "v1/attestation/activations"
    /// `POST`: the recovered secret buys the AIK certificate (section 10).
    public static let attestationCertificates = "v1/attestation/certificates"

    /// `GET`: the SSH CA's public keys, one OpenSSH line each, `text/plain` (section 12).
    public static let sshAuthority = "v1/ssh/ca"
    /// `POST`: an access token of scope `ssh` buys a certificate for a key (section 12).
    public static let sshCertificates = "v1/ssh/certificates"
    /// `GET`: the key revocation list (`PROTOCOL.krl`) for `sshd`'s `RevokedKeys` (section 12).
    public static let sshRevocations = "v1/ssh/krl"
    /// A host's view of the accounts and groups it may see (section 14).
    public static let hostDirectory = "v1/hosts/directory"

    /// The media type of every message, requested with `Accept` and sent as `Content-Type`.
    public static let jsonMediaType = "application/json"

    /// The query parameter that carries a caller's capability token on the URLs of
    /// bind jobs, transfers and enrollments (`?token=`, 256 bits, kept hashed).
    public static let tokenParameter = "token"
}
