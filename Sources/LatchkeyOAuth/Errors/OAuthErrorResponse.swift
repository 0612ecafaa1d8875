/// An error answer, `{"error", "error_description", "error_uri"}` with a 4xx or 5xx status
/// (RFC 6749 §5.2; the same members in a redirect, §4.1.2.1), one type for the provider
/// that sends it and the client that reads it. Descriptions never carry secrets.
///
/// Decoding is lenient on purpose: the body of a failed request comes from a provider
/// that may be broken or hostile, and a member of the wrong type is dropped rather than
/// turning the provider's refusal into a different error.
public struct OAuthErrorResponse: Codable, Hashable, Sendable, CustomStringConvertible {
    public var error: OAuthErrorCode?
    public var errorDescription: String?
    public var errorURI: String?

    public init(error: OAuthErrorCode, description: String? = nil, uri: String? = nil) {
        self.error = error
        self.errorDescription = description
        self.errorURI = uri
    }

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
        case errorURI = "error_uri"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        error = (try? container.decodeIfPresent(OAuthErrorCode.self, forKey: .error)) ?? nil
        errorDescription = (try? container.decodeIfPresent(String.self, forKey: .errorDescription)) ?? nil
        errorURI = (try? container.decodeIfPresent(String.self, forKey: .errorURI)) ?? nil
    }

    /// `code: description (uri)`, as error messages show it.
    public var description: String {
        (error?.rawValue ?? "(no error code)") + (errorDescription.map { ": \($0)" } ?? "") + (errorURI.map { " (\($0))" } ?? "")
    }
}
