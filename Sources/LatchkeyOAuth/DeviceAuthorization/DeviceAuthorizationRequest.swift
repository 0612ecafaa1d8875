/// The device authorization request (RFC 8628 §3.1): the client's id and the scope it
/// asks for, form-encoded. A client that authenticates adds its
/// ``ClientAuthenticationParameters`` (RFC 8628 §3.1 says it must authenticate if it can).
public struct DeviceAuthorizationRequest: FormParameters, Hashable {
    public enum Name: String, CaseIterable, Sendable {
        case clientID = "client_id"
        case scope
    }

    public var clientID: String?
    public var scope: String?

    public init(clientID: String?, scope: String? = nil) {
        self.clientID = clientID
        self.scope = scope
    }

    public init(form: [String: String]) {
        self.init(clientID: form[Name.clientID.rawValue], scope: form[Name.scope.rawValue])
    }

    public var formItems: [(String, String)] {
        var items = FormItems<Name>()
        items.add(.clientID, clientID)
        items.add(.scope, scope)
        return items.items
    }
}
