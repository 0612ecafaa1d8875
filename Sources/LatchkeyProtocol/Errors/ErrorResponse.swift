/// An error answer, `{"error", "error_description"}` with a 4xx or 5xx status
/// (RFC 6749 §5.2; docs/PROTOCOL.md, introduction). Descriptions never carry secrets.
///
/// Decoding is lenient on purpose: the body of a failed request comes from a provider
/// that may be broken or hostile, and a member of the wrong type is dropped rather than
/// turning the provider's refusal into a different error.
public struct ErrorResponse: Codable, Hashable, Sendable {
    public var error: ErrorCode?
    public var errorDescription: String?

    public init(error: ErrorCode, description: String? = nil) {
        self.error = error
        self.errorDescription = description
    }

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        error = (try? container.decodeIfPresent(ErrorCode.self, forKey: .error)) ?? nil
        errorDescription = (try? container.decodeIfPresent(String.self, forKey: .errorDescription)) ?? nil
    }
}
