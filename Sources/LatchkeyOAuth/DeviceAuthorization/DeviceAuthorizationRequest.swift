/// The device authorization request (RFC 8628 §3.1): the client's id and the scope it
/// asks for, form-encoded. A client that authenticates adds its
/// ``ClientAuthenticationParameters`` (RFC 8628 §3.1 says it must authenticate if it can),
/// and may describe what it asks for in `authorization_details` (RFC 9396 §2), a JSON
/// array carried as it is, and name the protected resource in `resource` (RFC 8707 §2).
public struct DeviceAuthorizationRequest: FormParameters, Hashable {
    public enum Name: String, CaseIterable, Sendable {
        case clientID = "client_id"
        case scope
        case authorizationDetails = "authorization_details"
        case resource
    }

    public var clientID: String?
    public var scope: String?
    public var authorizationDetails: String?
    public var resource: String?

    public init(clientID: String?, scope: String? = nil, authorizationDetails: String? = nil, resource: String? = nil) {
        self.clientID = clientID
        self.scope = scope
        self.authorizationDetails = authorizationDetails
        self.resource = resource
    }

    public init(form: [String: String]) {
        self.init(clientID: form[Name.clientID.rawValue], scope: form[Name.scope.rawValue], authorizationDetails: form[Name.authorizationDetails.rawValue],
            resource: form[Name.resource.rawValue]
        )
    }

    public var formItems: [(String, String)] {
        var items = FormItems<Name>()
        items.add(.clientID, clientID)
        items.add(.scope, scope)
        items.add(.authorizationDetails, authorizationDetails)
        items.add(.resource, resource)
        return items.items
    }
}
