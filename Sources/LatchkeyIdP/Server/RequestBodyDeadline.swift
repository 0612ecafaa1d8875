import HTTPTypes

/// The request body's deadline (kept by ``HTTPConnectionHandler``): a request whose head
/// announces a body must deliver its end within the configured time of its head, or the
/// request's body fails with ``Expired``, which ``RequestBodyMiddleware`` answers with 408.
/// A client that trickles a body byte by byte would otherwise hold its connection and a
/// task for as long as it likes: the idle timeout only needs one byte now and then.
enum RequestBodyDeadline {
    /// What the request's body fails with when it is late.
    struct Expired: Error {}

    /// Whether an HTTP/1.1 request with these fields has a body (RFC 9112 §6.3): without
    /// `Content-Length` or `Transfer-Encoding` it has none, so most `GET`s arm nothing.
    /// One walk over the fields: their subscript joins every value of a name into a new
    /// string. (NIO's parser has already refused conflicting lengths.)
    static func announcesBody(_ fields: HTTPFields) -> Bool {
        for field in fields {
            if field.name == .transferEncoding { return true }
            if field.name == .contentLength, field.value != "0" { return true }
        }
        return false
    }
}
