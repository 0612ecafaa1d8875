/// The parameters of the redirect that answers an authorization request: success (RFC
/// 6749 §4.1.2) or error (§4.1.2.1), with the issuer of RFC 9207 §2. The provider writes
/// them; ``AuthorizationRequest/authorizationCode(from:expectedIssuer:issuerParameterRequired:)``
/// reads them.
public struct AuthorizationResponseParameters: FormParameters, Hashable {
    public enum Name: String, CaseIterable, Sendable {
        case code, state, iss, error
        case errorDescription = "error_description"
        case errorURI = "error_uri"
    }

    public var code: String?
    public var state: String?
    /// RFC 9207: the issuer that answered, against mix-up attacks.
    public var issuer: String?
    public var error: OAuthErrorCode?
    public var errorDescription: String?
    public var errorURI: String?

    public init(code: String? = nil, state: String?, issuer: String?, error: OAuthErrorCode? = nil, errorDescription: String? = nil, errorURI: String? = nil) {
        self.code = code
        self.state = state
        self.issuer = issuer
        self.error = error
        self.errorDescription = errorDescription
        self.errorURI = errorURI
    }

    public init(form: [String: String]) {
        self.init(
            code: form[Name.code.rawValue], state: form[Name.state.rawValue], issuer: form[Name.iss.rawValue],
            error: form[Name.error.rawValue].map(OAuthErrorCode.init(rawValue:)),
            errorDescription: form[Name.errorDescription.rawValue], errorURI: form[Name.errorURI.rawValue]
        )
    }

    public var formItems: [(String, String)] {
        var items = FormItems<Name>()
        items.add(.code, code)
        items.add(.state, state)
        items.add(.iss, issuer)
        items.add(.error, error?.rawValue)
        items.add(.errorDescription, errorDescription)
        items.add(.errorURI, errorURI)
        return items.items
    }
}
