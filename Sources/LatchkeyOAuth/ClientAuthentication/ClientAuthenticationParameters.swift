/// How a client says who it is in a form body (RFC 6749 §2.3, §3.2.1; RFC 7521 §4.2 and
/// RFC 7523 §2.2): its `client_id`, and for `private_key_jwt` the assertion and its type.
/// The client appends these to any request it authenticates (token, revocation, device
/// authorization); the provider reads them wherever a client authenticates.
public struct ClientAuthenticationParameters: FormParameters, Hashable {
    public enum Name: String, CaseIterable, Sendable {
        case clientID = "client_id"
        case clientAssertionType = "client_assertion_type"
        case clientAssertion = "client_assertion"
    }

    public var clientID: String?
    public var clientAssertionType: String?
    public var clientAssertion: String?

    public init(clientID: String?, clientAssertionType: String? = nil, clientAssertion: String? = nil) {
        self.clientID = clientID
        self.clientAssertionType = clientAssertionType
        self.clientAssertion = clientAssertion
    }

    public init(form: [String: String]) {
        self.init(
            clientID: form[Name.clientID.rawValue], clientAssertionType: form[Name.clientAssertionType.rawValue],
            clientAssertion: form[Name.clientAssertion.rawValue]
        )
    }

    public var formItems: [(String, String)] {
        var items = FormItems<Name>()
        items.add(.clientID, clientID)
        items.add(.clientAssertionType, clientAssertionType)
        items.add(.clientAssertion, clientAssertion)
        return items.items
    }
}
