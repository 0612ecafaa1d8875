import Foundation
import Hummingbird
import Logging
import LatchkeyCrypto
import LatchkeyWebAuthn

/// The admin API, behind a bearer token compared in constant time (docs/PROTOCOL.md,
/// "Admin API"): identities (create, list, find, delete), their credentials (list,
/// revoke), bind jobs for an existing identity, the outbox, signing-key rotation.
enum AdminRoutes {
    static func add(to router: Router<ProviderRequestContext>, provider: Provider, adminToken: String) {
        let expected = Data(adminToken.utf8)
        let admin = provider.administration
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
            let (identity, bindURL) = try await admin.createIdentity(username: username, email: object["email"] as? String, displayName: object["displayName"] as? String)
            context.logger.info("identity created", metadata: ["identity": .string(identity.id)])
            return HTTPSupport.json(["identity": document(identity), "bindURL": bindURL.absoluteString], status: .created)
        }
        router.get("admin/identities") { request, _ in
            try authorize(request)
            let query = try HTTPSupport.query(request)
            if let name = query["username"] {
                let found = try await admin.find(name)
                return HTTPSupport.json(["identities": found.map { [document($0)] } ?? []])
            }
            let limit = query["limit"].flatMap(Int.init) ?? 100
            let page = try await admin.identities(after: query["after"], limit: limit)
            var answer: [String: Any] = ["identities": page.map(document)]
            if page.count == min(max(limit, 1), 500), let last = page.last { answer["next"] = last.id }
            return HTTPSupport.json(answer)
        }
        router.get("admin/identities/:identity") { request, context in
            try authorize(request)
            guard let identity = try await admin.find(try context.parameters.require("identity")) else {
                throw ProviderError.notFound("no such identity")
            }
            return HTTPSupport.json(["identity": document(identity)])
        }
        router.delete("admin/identities/:identity") { request, context in
            try authorize(request)
            let id = try context.parameters.require("identity")
            guard try await admin.deleteIdentity(id) else { throw ProviderError.notFound("no such identity") }
            context.logger.info("identity deleted", metadata: ["identity": .string(id)])
            return HTTPSupport.json(["deleted": true])
        }
        router.post("admin/identities/:identity/bind-jobs") { request, context in
            try authorize(request)
            let identity = try context.parameters.require("identity")
            let body = try await HTTPSupport.body(request)
            let object = body.isEmpty ? [:] : (try? JSONSerialization.jsonObject(with: body) as? [String: Any]) ?? [:]
            guard let kind = BindJob.Kind(rawValue: object["kind"] as? String ?? "bind") else {
                throw ProviderError.badRequest("invalid_request", "kind must be bind or recovery")
            }
            let url = try await admin.createBindJob(
                identityID: identity, kind: kind, lifetime: object["expiresIn"] as? Double,
                postBindingRedirectURI: object["postBindingRedirectURI"] as? String,
                requireEmailCode: object["requireEmailCode"] as? Bool ?? false
            )
            return HTTPSupport.json(["bindURL": url.absoluteString], status: .created)
        }
        router.get("admin/outbox") { request, _ in
            try authorize(request)
            let messages = try await admin.outboxMessages().map { message -> [String: Any] in
                ["to": message.to, "subject": message.subject, "body": message.body, "code": message.code as Any,
                 "createdAt": Int(message.createdAt.timeIntervalSince1970)]
            }
            return HTTPSupport.json(["messages": messages])
        }
        router.get("admin/identities/:identity/credentials") { request, context in
            try authorize(request)
            let identity = try context.parameters.require("identity")
            let list = try await admin.credentials(of: identity).map { credential -> [String: Any] in
                var entry: [String: Any] = [
                    "id": Base64URL.encode(credential.record.id), "algorithm": credential.record.publicKey.algorithm.joseName,
                    "signCount": credential.record.signCount, "revoked": credential.revoked,
                    "createdAt": Int(credential.createdAt.timeIntervalSince1970),
                ]
                if let used = credential.lastUsedAt { entry["lastUsedAt"] = Int(used.timeIntervalSince1970) }
                return entry
            }
            return HTTPSupport.json(["credentials": list])
        }
        router.post("admin/credentials/:credential/revoke") { request, context in
            try authorize(request)
            guard let id = try? Base64URL.decode(try context.parameters.require("credential")), !id.isEmpty, id.count <= 1023 else {
                throw ProviderError.badRequest("invalid_request", "credential id is not base64url")
            }
            try await admin.revokeCredential(id)
            context.logger.info("credential revoked", metadata: ["credential": .string(String(Base64URL.encode(id).prefix(8)))])
            return HTTPSupport.json(["revoked": true])
        }
        router.post("admin/signing-keys/rotate") { request, context in
            try authorize(request)
            let (kid, signsFrom) = try await provider.context.signingKeys.rotate()
            context.logger.info("signing key rotation started", metadata: ["kid": .string(kid)])
            return HTTPSupport.json(["kid": kid, "signsFrom": Int(signsFrom.timeIntervalSince1970)], status: .created)
        }
    }

    static func document(_ identity: Identity) -> [String: Any] {
        var object: [String: Any] = [
            "id": identity.id, "username": identity.username, "displayName": identity.displayName,
            "createdAt": Int(identity.createdAt.timeIntervalSince1970),
        ]
        if let email = identity.email { object["email"] = email }
        return object
    }
}
