import Foundation
import Hummingbird
import Logging
import LatchkeyCrypto
import LatchkeyProtocol
import LatchkeyWebAuthn
import LatchkeyOAuth

/// The admin API, behind a bearer token compared in constant time (docs/PROTOCOL.md,
/// "Admin API"): identities (create, list, find, delete), their credentials (list,
/// revoke), bind jobs for an existing identity, the outbox, signing-key rotation.
enum AdminRoutes {
    static func add(to router: Router<ProviderRequestContext>, provider: Provider, authorization: AdminAuthorization) {
        let admin = provider.administration
        @Sendable func authorize(_ request: Request, _ context: ProviderRequestContext) async throws {
            try await authorization.check(request, context)
        }
        router.post("admin/identities") { request, context in
            try await authorize(request, context)
            let creation = try await HTTPSupport.decode(AdminAPI.IdentityCreation.self, from: request, expected: "a JSON object with a username")
            let (identity, bindURL) = try await admin.createIdentity(username: creation.username, email: creation.email, displayName: creation.displayName)
            context.logger.info("identity created", metadata: ["identity": .string(identity.id)])
            return HTTPSupport.json(AdminAPI.IdentityCreated(identity: identity.adminView, bindURL: bindURL.absoluteString), status: .created)
        }
        router.get("admin/identities") { request, context in
            try await authorize(request, context)
            let query = try HTTPSupport.query(request)
            if let name = query["username"] {
                let found = try await admin.find(name)
                return HTTPSupport.json(AdminAPI.IdentityPage(identities: found.map { [$0.adminView] } ?? []))
            }
            let limit = query["limit"].flatMap(Int.init) ?? 100
            let page = try await admin.identities(after: query["after"], limit: limit)
            let next = page.count == min(max(limit, 1), 500) ? page.last?.id : nil
            return HTTPSupport.json(AdminAPI.IdentityPage(identities: page.map(\.adminView), next: next))
        }
        router.get("admin/identities/:identity") { request, context in
            try await authorize(request, context)
            guard let identity = try await admin.find(try context.parameters.require("identity")) else {
                throw ProviderError.notFound("no such identity")
            }
            return HTTPSupport.json(AdminAPI.IdentityAnswer(identity: identity.adminView))
        }
        router.delete("admin/identities/:identity") { request, context in
            try await authorize(request, context)
            let id = try context.parameters.require("identity")
            guard try await admin.deleteIdentity(id) else { throw ProviderError.notFound("no such identity") }
            context.logger.info("identity deleted", metadata: ["identity": .string(id)])
            return HTTPSupport.json(AdminAPI.Deletion(deleted: true))
        }
        router.post("admin/identities/:identity/bind-jobs") { request, context in
            try await authorize(request, context)
            let identity = try context.parameters.require("identity")
            let body = try await HTTPSupport.body(request)
            let job = try body.isEmpty
                ? AdminAPI.BindJobRequest()
                : HTTPSupport.decode(AdminAPI.BindJobRequest.self, from: body, expected: "a JSON object (kind, expiresIn, postBindingRedirectURI, requireEmailCode)")
            guard let kind = job.kind.map({ BindJob.Kind(rawValue: $0) }) ?? .bind else {
                throw ProviderError.badRequest(.invalidRequest, "kind must be bind or recovery")
            }
            let url = try await admin.createBindJob(
                identityID: identity, kind: kind, lifetime: job.expiresIn,
                postBindingRedirectURI: job.postBindingRedirectURI, requireEmailCode: job.requireEmailCode ?? false
            )
            return HTTPSupport.json(AdminAPI.BindJobCreated(bindURL: url.absoluteString), status: .created)
        }
        router.post("admin/resource-servers") { request, context in
            try await authorize(request, context)
            let creation = try await HTTPSupport.decode(AdminAPI.ResourceServerCreation.self, from: request, expected: "a JSON object with a name")
            let (id, secret) = try await provider.resourceServers.create(name: creation.name)
            context.logger.info("resource server created", metadata: ["resourceServer": .string(id)])
            return HTTPSupport.json(AdminAPI.ResourceServerCreated(
                id: id, secret: secret, introspectionEndpoint: provider.context.url(ProtocolPath.introspection).absoluteString
            ), status: .created)
        }
        router.delete("admin/resource-servers/:server") { request, context in
            try await authorize(request, context)
            guard try await provider.resourceServers.delete(try context.parameters.require("server")) else {
                throw ProviderError.notFound("no such resource server")
            }
            return HTTPSupport.json(AdminAPI.Deletion(deleted: true))
        }
        router.get("admin/outbox") { request, context in
            try await authorize(request, context)
            let messages = try await admin.outboxMessages().map { message in
                AdminAPI.OutboxMessage(
                    to: message.to, subject: message.subject, body: message.body, code: message.code,
                    createdAt: Int(message.createdAt.timeIntervalSince1970)
                )
            }
            return HTTPSupport.json(AdminAPI.Outbox(messages: messages))
        }
        router.get("admin/identities/:identity/credentials") { request, context in
            try await authorize(request, context)
            let identity = try context.parameters.require("identity")
            let list = try await admin.credentials(of: identity).map { credential in
                AdminAPI.Credential(
                    id: Base64URL.encode(credential.record.id), algorithm: credential.record.publicKey.algorithm.joseName,
                    signCount: credential.record.signCount, revoked: credential.revoked,
                    createdAt: Int(credential.createdAt.timeIntervalSince1970),
                    lastUsedAt: credential.lastUsedAt.map { Int($0.timeIntervalSince1970) }
                )
            }
            return HTTPSupport.json(AdminAPI.CredentialList(credentials: list))
        }
        router.post("admin/credentials/:credential/revoke") { request, context in
            try await authorize(request, context)
            guard let id = try? Base64URL.decode(try context.parameters.require("credential")), !id.isEmpty, id.count <= 1023 else {
                throw ProviderError.badRequest(.invalidRequest, "credential id is not base64url")
            }
            try await admin.revokeCredential(id)
            context.logger.info("credential revoked", metadata: ["credential": .string(String(Base64URL.encode(id).prefix(8)))])
            return HTTPSupport.json(AdminAPI.Revocation(revoked: true))
        }
        router.post("admin/signing-keys/rotate") { request, context in
            try await authorize(request, context)
            let (kid, signsFrom) = try await provider.context.signingKeys.rotate()
            context.logger.info("signing key rotation started", metadata: ["kid": .string(kid)])
            return HTTPSupport.json(AdminAPI.KeyRotation(kid: kid, signsFrom: Int(signsFrom.timeIntervalSince1970)), status: .created)
        }
    }
}
