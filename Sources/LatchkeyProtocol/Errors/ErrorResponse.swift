public import LatchkeyOAuth

/// An error answer, `{"error", "error_description"}` with a 4xx or 5xx status
/// (RFC 6749 §5.2; docs/PROTOCOL.md, introduction): the one ``OAuthErrorResponse`` both
/// sides use.
public typealias ErrorResponse = OAuthErrorResponse
