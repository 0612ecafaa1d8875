/// An introspection request (RFC 7662 §2.1), sent by a resource server that
/// authenticates itself (HTTP Basic at Latchkey's provider).
public struct TokenIntrospectionRequest: FormParameters, Hashable {
    public enum Name: String, CaseIterable, Sendable {
        case token
        case tokenTypeHint = "token_type_hint"
    }

    public var token: String?
    public var tokenTypeHint: TokenTypeHint?

    public init(token: String?, tokenTypeHint: TokenTypeHint? = nil) {
        self.token = token
        self.tokenTypeHint = tokenTypeHint
    }

    public init(form: [String: String]) {
        self.init(token: form[Name.token.rawValue], tokenTypeHint: form[Name.tokenTypeHint.rawValue].flatMap(TokenTypeHint.init(rawValue:)))
    }

    public var formItems: [(String, String)] {
        var items = FormItems<Name>()
        items.add(.token, token)
        items.add(.tokenTypeHint, tokenTypeHint?.rawValue)
        return items.items
    }
}
