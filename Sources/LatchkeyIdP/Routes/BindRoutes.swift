import Foundation
import Hummingbird
import LatchkeyCrypto
import LatchkeyWebAuthn

/// Binding a credential from a bind URL (DESIGN.md, wire protocol step 1).
enum BindRoutes {
    static func add(to router: Router<some RequestContext>, state: ProviderState) {
        router.get("v1/bind/:job") { request, context in
            let job = try context.parameters.require("job")
            guard let token = HTTPSupport.query(request)["token"] else { throw ProviderError.badRequest("invalid_request", "token missing") }
            let options = try await state.bindOptions(job: job, token: token)
            let submit = await state.url("v1/bind/\(job)").absoluteString + "?token=" + FormEncodingForURL.escape(token)
            return try HTTPSupport.json(encodable: options, wrapping: "publicKey", extra: ["submit": submit])
        }
        router.post("v1/bind/:job") { request, context in
            let job = try context.parameters.require("job")
            guard let token = HTTPSupport.query(request)["token"] else { throw ProviderError.badRequest("invalid_request", "token missing") }
            let response: RegistrationResponseJSON
            do {
                response = try RegistrationResponseJSON(json: try await HTTPSupport.body(request))
            } catch {
                throw ProviderError.badRequest("invalid_request", "body is not a RegistrationResponseJSON")
            }
            let credential = try await state.completeBind(job: job, token: token, response: response)
            return HTTPSupport.json(["credential": ["id": Base64URL.encode(credential.record.id), "identity": credential.identityID]], status: .created)
        }
    }
}

/// Percent-encoding for a query value (base64url tokens need none, but be exact).
enum FormEncodingForURL {
    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? text
    }
}
