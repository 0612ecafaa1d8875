import Foundation
import LatchkeyOAuth

/// A client ID metadata document as fetched (draft-ietf-oauth-client-id-metadata-document-03
/// §4, RFC 7591 §2's members), checked member by member: what is read is what the
/// provider uses, and everything it would not use safely is refused by name.
///
/// - `client_id` equals the URL it was fetched from, compared as strings (§4.1: no
///   normalisation).
/// - `redirect_uris`: 1 to 16 absolute http(s) URIs without a fragment, as for a
///   registered client; an authorization request must name one of them exactly.
/// - `token_endpoint_auth_method`: `none` (the default) or `private_key_jwt` with a
///   `jwks_uri` (fetched under the same rules) or `jwks`. No shared secret: a document
///   is public, so `client_secret`, or a `client_secret_*` method, is refused (§4).
/// - `grant_types`: `authorization_code` and `refresh_token` only; `response_types`:
///   `code` only.
/// - `client_name`: 1 to 128 characters without control characters; shown on the
///   consent page beside the host of the redirect URI, never alone. `logo_uri`,
///   `client_uri`, `tos_uri` and `policy_uri` are not read: nothing a stranger wrote
///   is shown as if the provider said it.
struct ClientMetadataDocument: Sendable {
    var clientID: String
    var clientName: String?
    var redirectURIs: [String]
    var grantTypes: [GrantType]
    var keyedBy: Keys?

    enum Keys: Sendable {
        case jwksURI(URL)
        case jwks(Data)
    }

    /// Why a document was refused, as the error says it.
    struct Refusal: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    init(json data: Data, fetchedFrom url: String) throws {
        let members: [String: JSONValue]
        do {
            members = try JSONValue(json: data, maximumSize: data.count).objectValue ?? { throw Refusal("the document is not a JSON object") }()
        } catch let refusal as Refusal {
            throw refusal
        } catch {
            throw Refusal("the document is not JSON")
        }
        guard let clientID = members["client_id"]?.stringValue, clientID == url else {
            throw Refusal("the document's client_id is not the URL it was fetched from")
        }
        self.clientID = clientID
        if let name = members["client_name"] {
            guard let text = name.stringValue?.trimmingCharacters(in: .whitespaces), (1...128).contains(text.count),
                  !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format })
            else { throw Refusal("client_name must be 1 to 128 characters without control or format characters") }
            clientName = text
        }
        guard let redirects = members["redirect_uris"]?.arrayValue, (1...16).contains(redirects.count) else {
            throw Refusal("redirect_uris must list 1 to 16 redirect URIs")
        }
        redirectURIs = try redirects.map { value in
            guard let text = value.stringValue, ClientRegistry.isRedirectURI(text) else {
                throw Refusal("each redirect URI must be an absolute http(s) URI without a fragment")
            }
            return text
        }
        guard members["client_secret"] == nil, members["client_secret_expires_at"] == nil else {
            throw Refusal("a metadata document is public: it must not carry a client secret")
        }
        let grants = try members["grant_types"].map { value -> [String] in
            guard let names = value.arrayValue?.compactMap(\.stringValue), names.count == value.arrayValue?.count else {
                throw Refusal("grant_types must be a list of grant type names")
            }
            return names
        } ?? [GrantType.authorizationCode.rawValue]
        let allowed = [GrantType.authorizationCode, .refreshToken]
        guard !grants.isEmpty, grants.allSatisfy({ name in allowed.contains { $0.rawValue == name } }) else {
            throw Refusal("grant_types may name authorization_code and refresh_token only")
        }
        grantTypes = allowed.filter { grants.contains($0.rawValue) }
        if let types = members["response_types"] {
            guard types.arrayValue?.map(\.stringValue) == [AuthorizationRequestParameters.codeResponseType] else {
                throw Refusal("response_types may name code only")
            }
        }
        switch members["token_endpoint_auth_method"]?.stringValue ?? (members["token_endpoint_auth_method"] == nil ? "none" : "") {
        case "none":
            guard members["jwks"] == nil, members["jwks_uri"] == nil else {
                throw Refusal("keys without token_endpoint_auth_method private_key_jwt")
            }
        case "private_key_jwt":
            if let uri = members["jwks_uri"]?.stringValue, members["jwks"] == nil, let url = URL(string: uri), url.scheme == "https" || url.scheme == "http" {
                keyedBy = .jwksURI(url)
            } else if let jwks = members["jwks"], members["jwks_uri"] == nil, case .object = jwks {
                keyedBy = .jwks(try jwks.json())
            } else {
                throw Refusal("private_key_jwt needs jwks_uri (an https URL) or jwks, one of them")
            }
        default:
            throw Refusal("token_endpoint_auth_method must be none or private_key_jwt (no shared secret in a public document)")
        }
    }
}
