/// The parameters of an authorization request (RFC 6749 §4.1.1), with PKCE (RFC 7636
/// §4.3), OpenID Connect's `nonce`, `max_age` and `login_hint` (OIDC Core §3.1.2.1) and
/// DPoP's `dpop_jkt` (RFC 9449 §10) and the `resource` indicator (RFC 8707 §2): what ``AuthorizationRequest`` writes into the URL and
/// the provider's `/authorize` reads back.
public struct AuthorizationRequestParameters: FormParameters, Hashable {
    public enum Name: String, CaseIterable, Sendable {
        case responseType = "response_type"
        case clientID = "client_id"
        case redirectURI = "redirect_uri"
        case scope, state, nonce
        case codeChallenge = "code_challenge"
        case codeChallengeMethod = "code_challenge_method"
        case maxAge = "max_age"
        case loginHint = "login_hint"
        case dpopJKT = "dpop_jkt"
        case resource
    }

    /// The `response_type` values Latchkey speaks (RFC 6749 §3.1.1): the authorization
    /// code flow only.
    public enum ResponseType: String, Sendable {
        case code
    }

    /// `response_type=code`, the authorization code flow (RFC 6749 §4.1.1).
    public static let codeResponseType = ResponseType.code.rawValue

    public var responseType: String?
    public var clientID: String?
    public var redirectURI: String?
    public var scope: String?
    public var state: String?
    public var nonce: String?
    public var codeChallenge: String?
    public var codeChallengeMethod: String?
    /// Seconds, as the text it travels in.
    public var maxAge: String?
    public var loginHint: String?
    public var dpopJKT: String?
    /// The protected resource the token is for (RFC 8707 §2), one per request.
    public var resource: String?

    public init(
        responseType: String? = Self.codeResponseType, clientID: String?, redirectURI: String?, scope: String?, state: String?, nonce: String?,
        codeChallenge: String?, codeChallengeMethod: String?, maxAge: String? = nil, loginHint: String? = nil, dpopJKT: String? = nil,
        resource: String? = nil
    ) {
        self.responseType = responseType
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scope = scope
        self.state = state
        self.nonce = nonce
        self.codeChallenge = codeChallenge
        self.codeChallengeMethod = codeChallengeMethod
        self.maxAge = maxAge
        self.loginHint = loginHint
        self.dpopJKT = dpopJKT
        self.resource = resource
    }

    public init(form: [String: String]) {
        self.init(
            responseType: form[Name.responseType.rawValue], clientID: form[Name.clientID.rawValue], redirectURI: form[Name.redirectURI.rawValue],
            scope: form[Name.scope.rawValue], state: form[Name.state.rawValue], nonce: form[Name.nonce.rawValue],
            codeChallenge: form[Name.codeChallenge.rawValue], codeChallengeMethod: form[Name.codeChallengeMethod.rawValue],
            maxAge: form[Name.maxAge.rawValue], loginHint: form[Name.loginHint.rawValue], dpopJKT: form[Name.dpopJKT.rawValue],
            resource: form[Name.resource.rawValue]
        )
    }

    public var formItems: [(String, String)] {
        var items = FormItems<Name>()
        items.add(.responseType, responseType)
        items.add(.clientID, clientID)
        items.add(.redirectURI, redirectURI)
        items.add(.scope, scope)
        items.add(.state, state)
        items.add(.nonce, nonce)
        items.add(.codeChallenge, codeChallenge)
        items.add(.codeChallengeMethod, codeChallengeMethod)
        items.add(.maxAge, maxAge)
        items.add(.loginHint, loginHint)
        items.add(.dpopJKT, dpopJKT)
        items.add(.resource, resource)
        return items.items
    }
}
