import LatchkeyProtocol

/// An error the provider answers with: an HTTP status and an OAuth-style error object
/// (`{"error", "error_description"}`, RFC 6749 §5.2). Descriptions never carry secrets.
struct ProviderError: Error, Sendable {
    var status: Int
    var error: ErrorCode
    var description: String

    static func badRequest(_ error: ErrorCode, _ description: String) -> ProviderError {
        ProviderError(status: 400, error: error, description: description)
    }

    static func notFound(_ description: String) -> ProviderError {
        ProviderError(status: 404, error: .notFound, description: description)
    }

    static let unauthorized = ProviderError(status: 401, error: .invalidToken, description: "a valid bearer token is required")
}
