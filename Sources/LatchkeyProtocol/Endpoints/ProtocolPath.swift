/// The endpoints a client calls by itself, relative to the issuer (docs/PROTOCOL.md).
/// Every other URL it calls is named in a provider's answer (`submit`, `status`, …) and
/// checked to be on the provider's origin.
public enum ProtocolPath {
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
    /// `GET v1/authenticate/<session>`: an authenticate URL's path prefix (section 3).
    public static let authenticate = "v1/authenticate"

    /// The query parameter that carries a caller's capability token on the URLs of
    /// bind jobs, transfers and enrollments (`?token=`, 256 bits, kept hashed).
    public static let tokenParameter = "token"
}
