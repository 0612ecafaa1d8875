/// A token request (RFC 6749 §4.1.3 with RFC 7636 §4.5's `code_verifier`, and §6 for a
/// refresh, RFC 8628 §3.4 for a device code, RFC 8707 §2's `resource`), as the client sends it and the provider's token endpoint reads it.
public struct TokenRequest: FormParameters, Hashable {
    public enum Name: String, CaseIterable, Sendable {
        case grantType = "grant_type"
        case code
        case redirectURI = "redirect_uri"
        case codeVerifier = "code_verifier"
        case refreshToken = "refresh_token"
        case scope
        case clientID = "client_id"
        case deviceCode = "device_code"
        case resource
    }

    public var grantType: GrantType?
    public var code: String?
    public var redirectURI: String?
    public var codeVerifier: String?
    public var refreshToken: String?
    public var scope: String?
    /// A public client names itself here (RFC 6749 §3.2.1); a confidential one
    /// authenticates instead.
    public var clientID: String?
    /// RFC 8628 §3.4: the device code of a device authorization grant.
    public var deviceCode: String?
    /// RFC 8707 §2: the protected resource the access token is for.
    public var resource: String?

    public init(
        grantType: GrantType?, code: String? = nil, redirectURI: String? = nil, codeVerifier: String? = nil,
        refreshToken: String? = nil, scope: String? = nil, clientID: String? = nil, deviceCode: String? = nil,
        resource: String? = nil
    ) {
        self.grantType = grantType
        self.code = code
        self.redirectURI = redirectURI
        self.codeVerifier = codeVerifier
        self.refreshToken = refreshToken
        self.scope = scope
        self.clientID = clientID
        self.deviceCode = deviceCode
        self.resource = resource
    }

    public init(form: [String: String]) {
        self.init(
            grantType: form[Name.grantType.rawValue].map(GrantType.init(rawValue:)), code: form[Name.code.rawValue],
            redirectURI: form[Name.redirectURI.rawValue], codeVerifier: form[Name.codeVerifier.rawValue],
            refreshToken: form[Name.refreshToken.rawValue], scope: form[Name.scope.rawValue], clientID: form[Name.clientID.rawValue],
            deviceCode: form[Name.deviceCode.rawValue], resource: form[Name.resource.rawValue]
        )
    }

    public var formItems: [(String, String)] {
        var items = FormItems<Name>()
        items.add(.grantType, grantType?.rawValue)
        items.add(.code, code)
        items.add(.redirectURI, redirectURI)
        items.add(.codeVerifier, codeVerifier)
        items.add(.refreshToken, refreshToken)
        items.add(.scope, scope)
        items.add(.clientID, clientID)
        items.add(.deviceCode, deviceCode)
        items.add(.resource, resource)
        return items.items
    }
}
