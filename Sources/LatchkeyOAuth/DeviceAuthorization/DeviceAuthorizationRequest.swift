/// The device authorization request (RFC 8628 §3.1): the client's id and the scope it
/// asks for, form-encoded. A client that authenticates adds its
/// ``ClientAuthenticationParameters`` (RFC 8628 §3.1 says it must authenticate if it can),
/// and may describe what it asks for in `authorization_details` (RFC 9396 §2), a JSON
/// array carried as it is.
public struct DeviceAuthorizationRequest: FormParameters, Hashable {
    public enum Name: String, CaseIterable, Sendable {
        case clientID = "client_id"
        case scope
        case authorizationDetails = "authorization_details"
    }

    public var clientID: String?
    public var scope: String?
    public var authorizationDetails: String?

    public init(clientID: String?, scope: String? = nil, authorizationDetails: String? = nil) {
        self.clientID = clientID
        self.scope = scope
        self.authorizationDetails = authorizationDetails
    }

    public init(form: [String: String]) {
        self.init(clientID: form[Name.clientID.rawValue], scope: form[Name.scope.rawValue], authorizationDetails: form[Name.authorizationDetails.rawValue])
    }

    public var formItems: [(String, String)] {
        var items = FormItems<Name>()
        items.add(.clientID, clientID)
        items.add(.scope, scope)
        items.add(.authorizationDetails, authorizationDetails)
        return items.items
    }
}
