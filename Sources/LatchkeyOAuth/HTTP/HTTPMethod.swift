/// The HTTP methods Latchkey's requests use (RFC 9110 §9.3), spelled once for the client's
/// ``TransportRequest``s and the `htm` of DPoP proofs (RFC 9449 §4.2), which compare them
/// exactly.
public enum HTTPMethod {
    public static let get = "GET"
    public static let post = "POST"
    public static let put = "PUT"
    public static let delete = "DELETE"
    public static let patch = "PATCH"
}
