import Foundation
import Hummingbird
import Logging
import LatchkeyCrypto
import LatchkeyProtocol
import LatchkeyWebAuthn
import LatchkeyOAuth

/// Binding a credential from a bind URL (docs/PROTOCOL.md section 2); opened in a
/// browser, the bind URL answers the registration page (section 9).
enum BindRoutes {
    static func add(to router: RouterGroup<ProviderRequestContext>, provider: Provider) {
        router.get("v1/bind/:job") { request, context in
            if PageRoutes.wantsPage(request) {
                return await ErrorPage.rendering(provider.context, logger: context.logger) {
                    let job = try context.parameters.require("job")
                    let token = try HTTPSupport.capabilityToken(request)
                    let (found, identity) = try await provider.bindJobs.describe(job: job, token: token)
                    return try BindPage.page(
                        job: job, token: token, username: identity.username, displayName: identity.displayName,
                        recovery: found.kind == .recovery, context: provider.context
                    )
                }
            }
            let job = try context.parameters.require("job")
            let token = try HTTPSupport.capabilityToken(request)
            return try answer(await provider.bindJobs.options(job: job, token: token), job: job, token: token, provider: provider)
        }
        // The verify-code step's submit URL (docs/PROTOCOL.md section 4).
        router.post("v1/bind/:job/code") { request, context in
            let job = try context.parameters.require("job")
            try PageTicket.check(request, .bind, binding: job, context: provider.context)
            let token = try HTTPSupport.capabilityToken(request)
            let submission = try await HTTPSupport.decode(StepSubmission.self, from: request, expected: "a JSON object with a code")
            guard let code = submission[.code], code.utf8.count <= 32 else {
                throw ProviderError.badRequest(.invalidRequest, "a JSON body with a code is required")
            }
            return try answer(await provider.bindJobs.verifyCode(job: job, token: token, code: code), job: job, token: token, provider: provider)
        }
        // The accept-terms step's submit URL.
        router.post("v1/bind/:job/terms") { request, context in
            let job = try context.parameters.require("job")
            try PageTicket.check(request, .bind, binding: job, context: provider.context)
            let token = try HTTPSupport.capabilityToken(request)
            let submission = try await HTTPSupport.decode(StepSubmission.self, from: request, expected: "a JSON object with accept")
            guard let accept = submission[.accept] else {
                throw ProviderError.badRequest(.invalidRequest, "a JSON body with accept is required")
            }
            return try answer(await provider.bindJobs.acceptTerms(job: job, token: token, accepted: accept == StepSubmission.yes), job: job, token: token, provider: provider)
        }
        router.post("v1/bind/:job") { request, context in
            let job = try context.parameters.require("job")
            let fromPage = try PageTicket.check(request, .bind, binding: job, context: provider.context)
            let token = try HTTPSupport.capabilityToken(request)
            let response: RegistrationResponseJSON
            do {
                response = try RegistrationResponseJSON(json: try await HTTPSupport.body(request))
            } catch {
                throw ProviderError.badRequest(.invalidRequest, "body is not a RegistrationResponseJSON", underlying: error)
            }
            let (credential, redirect) = try await provider.bindJobs.complete(
                job: job, token: token, response: response, from: fromPage ? .browser : .client
            )
            context.logger.info("credential bound", metadata: [
                "identity": .string(credential.identityID), "credential": .string(String(Base64URL.encode(credential.record.id).prefix(8))),
            ])
            return HTTPSupport.json(BindExchange.Result(
                credential: CredentialReference(id: Base64URL.encode(credential.record.id), identity: credential.identityID),
                postBindingRedirectURI: redirect
            ), status: .created)
        }
    }

    /// `{publicKey, submit}`, or `{step: {name, submit, fields, message}}`.
    static func answer(_ answer: BindJobs.Answer, job: String, token: String, provider: Provider) -> Response {
        let base = "\(ProtocolPath.bind)/\(job)"
        func withToken(_ path: String) -> String { provider.context.url(path, token: token) }
        switch answer {
        case .options(let options):
            return HTTPSupport.json(BindExchange.Challenge(publicKey: options, submit: withToken(base)))
        case .verifyCode(let message):
            return HTTPSupport.json(StepReply(step: Step(
                name: .verifyCode, submit: withToken(base + "/code"), message: message, fields: [.code]
            )))
        case .acceptTerms(let message):
            return HTTPSupport.json(StepReply(step: Step(
                name: .acceptTerms, submit: withToken(base + "/terms"), message: message, fields: [.accept]
            )))
        }
    }
}
