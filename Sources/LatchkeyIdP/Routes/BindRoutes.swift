import Foundation
import Hummingbird
import Logging
import LatchkeyCrypto
import LatchkeyWebAuthn

/// Binding a credential from a bind URL (docs/PROTOCOL.md section 2).
enum BindRoutes {
    static func add(to router: Router<ProviderRequestContext>, provider: Provider) {
        router.get("v1/bind/:job") { request, context in
            let job = try context.parameters.require("job")
            guard let token = try HTTPSupport.query(request)["token"] else { throw ProviderError.badRequest("invalid_request", "token missing") }
            return try answer(await provider.bindJobs.options(job: job, token: token), job: job, token: token, provider: provider)
        }
        // The verify-code step's submit URL (docs/PROTOCOL.md section 4).
        router.post("v1/bind/:job/code") { request, context in
            let job = try context.parameters.require("job")
            guard let token = try HTTPSupport.query(request)["token"] else { throw ProviderError.badRequest("invalid_request", "token missing") }
            let body = try await HTTPSupport.body(request)
            guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any], let code = object["code"] as? String, code.utf8.count <= 32 else {
                throw ProviderError.badRequest("invalid_request", "a JSON body with a code is required")
            }
            return try answer(await provider.bindJobs.verifyCode(job: job, token: token, code: code), job: job, token: token, provider: provider)
        }
        // The accept-terms step's submit URL.
        router.post("v1/bind/:job/terms") { request, context in
            let job = try context.parameters.require("job")
            guard let token = try HTTPSupport.query(request)["token"] else { throw ProviderError.badRequest("invalid_request", "token missing") }
            let body = try await HTTPSupport.body(request)
            guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any], let accept = object["accept"] as? String else {
                throw ProviderError.badRequest("invalid_request", "a JSON body with accept is required")
            }
            return try answer(await provider.bindJobs.acceptTerms(job: job, token: token, accepted: accept == "true"), job: job, token: token, provider: provider)
        }
        router.post("v1/bind/:job") { request, context in
            let job = try context.parameters.require("job")
            guard let token = try HTTPSupport.query(request)["token"] else { throw ProviderError.badRequest("invalid_request", "token missing") }
            let response: RegistrationResponseJSON
            do {
                response = try RegistrationResponseJSON(json: try await HTTPSupport.body(request))
            } catch {
                throw ProviderError.badRequest("invalid_request", "body is not a RegistrationResponseJSON")
            }
            let (credential, redirect) = try await provider.bindJobs.complete(job: job, token: token, response: response)
            context.logger.info("credential bound", metadata: [
                "identity": .string(credential.identityID), "credential": .string(String(Base64URL.encode(credential.record.id).prefix(8))),
            ])
            var answer: [String: Any] = ["credential": ["id": Base64URL.encode(credential.record.id), "identity": credential.identityID]]
            if let redirect { answer["postBindingRedirectURI"] = redirect }
            return HTTPSupport.json(answer, status: .created)
        }
    }

    /// `{publicKey, submit}`, or `{step: {name, submit, fields, message}}`.
    static func answer(_ answer: BindJobs.Answer, job: String, token: String, provider: Provider) throws -> Response {
        let base = provider.context.url("v1/bind/\(job)")
        func withToken(_ url: URL) -> String {
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
            components?.queryItems = [URLQueryItem(name: "token", value: token)]
            return components?.string ?? url.absoluteString
        }
        switch answer {
        case .options(let options):
            return try HTTPSupport.json(encodable: options, wrapping: "publicKey", extra: ["submit": withToken(base)])
        case .verifyCode(let message):
            return HTTPSupport.json(["step": [
                "name": "verify-code", "submit": withToken(base.appendingPathComponent("code")), "message": message,
                "fields": [["name": "code", "required": true, "kind": "one-time-code"]],
            ] as [String: Any]])
        case .acceptTerms(let message):
            return HTTPSupport.json(["step": [
                "name": "accept-terms", "submit": withToken(base.appendingPathComponent("terms")), "message": message,
                "fields": [["name": "accept", "required": true, "kind": "boolean"]],
            ] as [String: Any]])
        }
    }
}
