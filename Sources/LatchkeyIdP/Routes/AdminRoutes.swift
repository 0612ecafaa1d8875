import Foundation
import Hummingbird
import Logging
import LatchkeyCrypto
import LatchkeyWebAuthn

/// The admin API, behind a bearer token compared in constant time: identities, bind jobs,
/// credentials.
enum AdminRoutes {
    static func add(to router: Router<ProviderRequestContext>, state: ProviderState, adminToken: String) {
        let expected = Data(adminToken.utf8)
        @Sendable func authorize(_ request: Request) throws {
            guard let token = HTTPSupport.bearerToken(request), ConstantTime.isEqual(Data(token.utf8), expected) else {
                throw ProviderError.unauthorized
            }
        }
        router.post("admin/identities") { request, context in
            try authorize(request)
            let body = try await HTTPSupport.body(request)
            guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any], let username = object["username"] as? String else {
                throw ProviderError.badRequest("invalid_request", "a JSON body with a username is required")
            }
            let identity = try await state.createIdentity(username: username, email: object["email"] as? String, displayName: object["displayName"] as? String)
            let bindURL = try await state.createBindJob(identityID: identity.id)
            context.logger.info("identity created", metadata: ["identity": .string(identity.id)])
            return HTTPSupport.json([
                "identity": ["id": identity.id, "username": identity.username, "email": identity.email as Any, "displayName": identity.displayName],
                "bindURL": bindURL.absoluteString,
            ], status: .created)
        }
        router.post("admin/identities/:identity/bind-jobs") { request, context in
            try authorize(request)
            let identity = try context.parameters.require("identity")
            let body = try await HTTPSupport.body(request)
            let object = body.isEmpty ? [:] : (try? JSONSerialization.jsonObject(with: body) as? [String: Any]) ?? [:]
            guard let kind = ProviderState.BindJob.Kind(rawValue: object["kind"] as? String ?? "bind") else {
                throw ProviderError.badRequest("invalid_request", "kind must be bind or recovery")
            }
            let url = try await state.createBindJob(
                identityID: identity, kind: kind, lifetime: object["expiresIn"] as? Double,
                postBindingRedirectURI: object["postBindingRedirectURI"] as? String,
                requireEmailCode: object["requireEmailCode"] as? Bool ?? false
            )
            return HTTPSupport.json(["bindURL": url.absoluteString], status: .created)
        }
        router.get("admin/outbox") { request, _ in
            try authorize(request)
            let messages = await state.outbox.map { message -> [String: Any] in
                ["to": message.to, "subject": message.subject, "body": message.body, "code": message.code as Any,
                 "createdAt": Int(message.createdAt.timeIntervalSince1970)]
            }
            return HTTPSupport.json(["messages": messages])
        }
        router.get("admin/identities/:identity/credentials") { request, context in
            try authorize(request)
            let identity = try context.parameters.require("identity")
            let list = await state.credentials(of: identity).map { credential -> [String: Any] in
                ["id": Base64URL.encode(credential.record.id), "algorithm": credential.record.publicKey.algorithm.joseName,
                 "signCount": credential.record.signCount, "revoked": credential.revoked]
            }
            return HTTPSupport.json(["credentials": list])
        }
        router.post("admin/credentials/:credential/revoke") { request, context in
            try authorize(request)
            guard let id = try? Base64URL.decode(try context.parameters.require("credential")) else {
                throw ProviderError.badRequest("invalid_request", "credential id is not base64url")
            }
            try await state.revokeCredential(id)
            return HTTPSupport.json(["revoked": true])
        }
    }
}
