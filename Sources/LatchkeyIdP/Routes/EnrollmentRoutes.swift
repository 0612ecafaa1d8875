import Foundation
import Hummingbird
import LatchkeyProtocol
import LatchkeyOAuth

/// Self-service sign-up and account recovery (docs/PROTOCOL.md section 6): steps first
/// (`enroll-profile`, `verify-code`), then a bind URL the client follows as in section 2.
/// The sign-up and recovery pages (section 9) post here too, with their page token.
enum EnrollmentRoutes {
    static func add(to router: RouterGroup<ProviderRequestContext>, provider: Provider) {
        router.post(RouterPath(ProtocolPath.signUp)) { request, context in
            try PageTicket.check(request, .signUp, binding: "", context: provider.context)
            let start = try await HTTPSupport.decode(EnrollmentExchange.Start.self, from: request, expected: "a JSON object with a username")
            let (id, token) = try await provider.enrollments.startSignUp(username: start.username, clientKey: context.limitKey)
            return step(.enrollProfile, submit: provider.context.url("\(ProtocolPath.signUp)/\(id)/profile", token: token),
                        message: "Tell us who you are", fields: Step.Field.profile)
        }
        router.post("v1/signup/:enrollment/profile") { request, context in
            try PageTicket.check(request, .signUp, binding: "", context: provider.context)
            let id = try context.parameters.require("enrollment")
            let token = try HTTPSupport.capabilityToken(request)
            let profile = try await HTTPSupport.decode(StepSubmission.self, from: request, expected: "a JSON object of strings")
            let message = try await provider.enrollments.signUpProfile(id, token: token, fields: profile.values)
            return step(.verifyCode, submit: provider.context.url("\(ProtocolPath.signUp)/\(id)/code", token: token), message: message, fields: [.code])
        }
        router.post("v1/signup/:enrollment/code") { request, context in
            try PageTicket.check(request, .signUp, binding: "", context: provider.context)
            let id = try context.parameters.require("enrollment")
            let bindURL = try await provider.enrollments.signUpCode(id, token: try HTTPSupport.capabilityToken(request), code: try await code(request), clientKey: context.limitKey)
            return HTTPSupport.json(EnrollmentExchange.Finished(bindURL: bindURL.absoluteString))
        }
        router.post(RouterPath(ProtocolPath.recovery)) { request, context in
            try PageTicket.check(request, .recovery, binding: "", context: provider.context)
            let start = try await HTTPSupport.decode(EnrollmentExchange.Start.self, from: request, expected: "a JSON object with a username")
            let (id, token) = try await provider.enrollments.startRecovery(username: start.username, clientKey: context.limitKey)
            return step(.verifyCode, submit: provider.context.url("\(ProtocolPath.recovery)/\(id)/code", token: token),
                        message: "If this account exists and has an e-mail address, a code was sent to it", fields: [.code])
        }
        router.post("v1/recovery/:enrollment/code") { request, context in
            try PageTicket.check(request, .recovery, binding: "", context: provider.context)
            let id = try context.parameters.require("enrollment")
            let bindURL = try await provider.enrollments.recoveryCode(id, token: try HTTPSupport.capabilityToken(request), code: try await code(request), clientKey: context.limitKey)
            return HTTPSupport.json(EnrollmentExchange.Finished(bindURL: bindURL.absoluteString))
        }
    }

    static func step(_ name: Step.Name, submit: String, message: String, fields: [Step.Field]) -> Response {
        HTTPSupport.json(StepReply(step: Step(name: name, submit: submit, message: message, fields: fields)))
    }

    /// The `verify-code` step's answer.
    static func code(_ request: Request) async throws -> String {
        let submission = try await HTTPSupport.decode(StepSubmission.self, from: request, expected: "a JSON object with a code")
        guard let code = submission[.code], code.utf8.count <= 64 else {
            throw ProviderError.badRequest(.invalidRequest, "a JSON body with a code is required")
        }
        return code
    }
}
