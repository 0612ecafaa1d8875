/// A revocation request (RFC 7009 §2.1): the token, an optional hint of its kind, and a
/// public client's `client_id` (a confidential client authenticates instead).
public struct TokenRevocationRequest: FormParameters, Hashable {
    public enum Name: String, CaseIterable, Sendable {
        case token
        case tokenTypeHint = "token_type_hint"
        case clientID = "client_id"
    }

    public var token: String?
    public var tokenTypeHint: TokenTypeHint?
    public var clientID: String?

    public init(token: String?, tokenTypeHint: TokenTypeHint? = nil, clientID: String? = nil) {
        self.token = token
        self.tokenTypeHint = tokenTypeHint
        self.clientID = clientID
    }

    /// An unknown hint is dropped (RFC 7009 §2.1: the server may ignore it).
    public init(form: [String: String]) {
        self.init(
            token: form[Name.token.rawValue], tokenTypeHint: form[Name.tokenTypeHint.rawValue].flatMap(TokenTypeHint.init(rawValue:)),
            clientID: form[Name.clientID.rawValue]
        )
    }

    public var formItems: [(String, String)] {
        var items = FormItems<Name>()
        items.add(.token, token)
        items.add(.tokenTypeHint, tokenTypeHint?.rawValue)
        items.add(.clientID, clientID)
        return items.items
    }
}
