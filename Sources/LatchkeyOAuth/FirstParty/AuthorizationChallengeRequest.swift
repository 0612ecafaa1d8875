/// A request to the authorization challenge endpoint (draft-ietf-oauth-first-party-apps-04
/// §5.1): the authorization request's parameters (RFC 6749 §4.1.1 with PKCE, RFC 7636
/// §4.3, required here), the `auth_session` of an ongoing sequence (§5.3.1), and the
/// answer to what the server asked for — for Latchkey's WebAuthn profile, the assertion as
/// `webauthn_response` (AuthenticationResponseJSON, WebAuthn L3 §5.1.4.1; docs/PROTOCOL.md
/// section 8).
public struct AuthorizationChallengeRequest: FormParameters, Hashable {
    public enum Name: String, CaseIterable, Sendable {
        case responseType = "response_type"
        case clientID = "client_id"
        case scope
        case codeChallenge = "code_challenge"
        case codeChallengeMethod = "code_challenge_method"
        case loginHint = "login_hint"
        case authSession = "auth_session"
        case webauthnResponse = "webauthn_response"
        case resource
    }

    public var responseType: String?
    public var clientID: String?
    public var scope: String?
    public var codeChallenge: String?
    public var codeChallengeMethod: String?
    public var loginHint: String?
    public var authSession: String?
    /// The assertion, as AuthenticationResponseJSON text.
    public var webauthnResponse: String?
    /// The protected resource the tokens are for (RFC 8707 §2).
    public var resource: String?

    public init(
        responseType: String? = AuthorizationRequestParameters.codeResponseType, clientID: String?, scope: String? = nil,
        codeChallenge: String? = nil, codeChallengeMethod: String? = nil, loginHint: String? = nil, authSession: String? = nil,
        webauthnResponse: String? = nil, resource: String? = nil
    ) {
        self.responseType = responseType
        self.clientID = clientID
        self.scope = scope
        self.codeChallenge = codeChallenge
        self.codeChallengeMethod = codeChallengeMethod
        self.loginHint = loginHint
        self.authSession = authSession
        self.webauthnResponse = webauthnResponse
        self.resource = resource
    }

    public init(form: [String: String]) {
        self.init(
            responseType: form[Name.responseType.rawValue], clientID: form[Name.clientID.rawValue], scope: form[Name.scope.rawValue],
            codeChallenge: form[Name.codeChallenge.rawValue], codeChallengeMethod: form[Name.codeChallengeMethod.rawValue],
            loginHint: form[Name.loginHint.rawValue], authSession: form[Name.authSession.rawValue],
            webauthnResponse: form[Name.webauthnResponse.rawValue], resource: form[Name.resource.rawValue]
        )
    }

    public var formItems: [(String, String)] {
        var items = FormItems<Name>()
        items.add(.responseType, responseType)
        items.add(.clientID, clientID)
        items.add(.scope, scope)
        items.add(.codeChallenge, codeChallenge)
        items.add(.codeChallengeMethod, codeChallengeMethod)
        items.add(.loginHint, loginHint)
        items.add(.authSession, authSession)
        items.add(.webauthnResponse, webauthnResponse)
        items.add(.resource, resource)
        return items.items
    }
}
