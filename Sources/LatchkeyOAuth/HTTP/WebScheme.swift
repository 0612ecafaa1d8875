/// The URI schemes OAuth uses on the web (RFC 9110 §4.2), named once.
public enum WebScheme {
    public static let https = "https"
    public static let http = "http"
}
