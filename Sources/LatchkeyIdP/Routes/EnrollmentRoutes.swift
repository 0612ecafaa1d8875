import Foundation
import Hummingbird

/// Self-service sign-up and account recovery (docs/PROTOCOL.md section 6): steps first
/// (`enroll-profile`, `verify-code`), then a bind URL the client follows as in section 2.
enum EnrollmentRoutes {
    static func add(to router: Router<ProviderRequestContext>, provider: Provider) {
        router.post("v1/signup") { request, context in
            let username = try username(await HTTPSupport.body(request))
            let (id, token) = try await provider.enrollments.startSignUp(username: username, clientAddress: context.clientAddress)
            let fields = Enrollments.profileFields.map { ["name": $0.name, "required": $0.required, "kind": $0.kind] as [String: Any] }
            return step("enroll-profile", submit: provider.context.url("v1/signup/\(id)/profile", token: token),
                        message: "Tell us who you are", fields: fields)
        }
        router.post("v1/signup/:enrollment/profile") { request, context in
            let id = try context.parameters.require("enrollment")
            let object = try TransferRoutes.jsonObject(await HTTPSupport.body(request))
            let fields = object.compactMapValues { $0 as? String }
            let message = try await provider.enrollments.signUpProfile(id, token: try TransferRoutes.token(request), fields: fields)
            return step("verify-code", submit: provider.context.url("v1/signup/\(id)/code", token: try TransferRoutes.token(request)),
                        message: message, fields: [codeField])
        }
        router.post("v1/signup/:enrollment/code") { request, context in
            let id = try context.parameters.require("enrollment")
            let bindURL = try await provider.enrollments.signUpCode(id, token: try TransferRoutes.token(request), code: try code(await HTTPSupport.body(request)))
            return HTTPSupport.json(["bindURL": bindURL.absoluteString])
        }
        router.post("v1/recovery") { request, context in
            let username = try username(await HTTPSupport.body(request))
            let (id, token) = try await provider.enrollments.startRecovery(username: username, clientAddress: context.clientAddress)
            return step("verify-code", submit: provider.context.url("v1/recovery/\(id)/code", token: token),
                        message: "If this account exists and has an e-mail address, a code was sent to it", fields: [codeField])
        }
        router.post("v1/recovery/:enrollment/code") { request, context in
            let id = try context.parameters.require("enrollment")
            let bindURL = try await provider.enrollments.recoveryCode(id, token: try TransferRoutes.token(request), code: try code(await HTTPSupport.body(request)))
            return HTTPSupport.json(["bindURL": bindURL.absoluteString])
        }
    }

    static var codeField: [String: Any] { ["name": "code", "required": true, "kind": "one-time-code"] }

    static func step(_ name: String, submit: String, message: String, fields: [[String: Any]]) -> Response {
        HTTPSupport.json(["step": ["name": name, "submit": submit, "message": message, "fields": fields] as [String: Any]])
    }

    static func username(_ body: Data) throws -> String {
        guard let username = try TransferRoutes.jsonObject(body)["username"] as? String else {
            throw ProviderError.badRequest("invalid_request", "a JSON body with a username is required")
        }
        return username
    }

    static func code(_ body: Data) throws -> String {
        guard let code = try TransferRoutes.jsonObject(body)["code"] as? String, code.utf8.count <= 32 else {
            throw ProviderError.badRequest("invalid_request", "a JSON body with a code is required")
        }
        return code
    }
}
