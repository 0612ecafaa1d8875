import Foundation
import Hummingbird
import Logging
import LatchkeyCrypto
import LatchkeyProtocol
import LatchkeyWebAuthn
import LatchkeyOAuth

/// The admin API, behind a bearer token compared in constant time (docs/PROTOCOL.md,
/// "Admin API"): identities (create, list, find, delete), their credentials (list,
/// revoke), bind jobs for an existing identity, registered clients, the outbox,
/// signing-key rotation, the audit log (`AdminRoutes+Events.swift`), SSH principals
/// (`AdminRoutes+SSH.swift`), POSIX accounts, groups and host access (`AdminRoutes+POSIX.swift`).
struct AdminRoutes: Sendable {
    let provider: Provider
    let authorization: AdminAuthorization
    private var admin: Administration { provider.administration }

    func add(to router: Router<ProviderRequestContext>) {
        on(router, AdminAPI.createIdentity, status: .created, createIdentity)
        on(router, AdminAPI.listIdentities, listIdentities)
        on(router, AdminAPI.identity, findIdentity)
        on(router, AdminAPI.deleteIdentity, deleteIdentity)
        on(router, AdminAPI.createBindJob, status: .created, createBindJob)
        on(router, AdminAPI.createResourceServer, status: .created, createResourceServer)
        on(router, AdminAPI.deleteResourceServer, deleteResourceServer)
        on(router, AdminAPI.createClient, status: .created, createClient)
        on(router, AdminAPI.listClients, listClients)
        on(router, AdminAPI.deleteClient, deleteClient)
        on(router, AdminAPI.outbox, listOutbox)
        on(router, AdminAPI.credentials, listCredentials)
        on(router, AdminAPI.revokeCredential, revokeCredential)
        on(router, AdminAPI.revokeConsent, revokeConsent)
        on(router, AdminAPI.rotateSigningKey, status: .created, rotateSigningKey)
        on(router, AdminAPI.events, listEvents)
        on(router, AdminAPI.verifyEvents, verifyEvents)
        on(router, AdminAPI.eventCheckpoints, listEventCheckpoints)
        on(router, AdminAPI.setSSHPrincipals, setSSHPrincipals)
        on(router, AdminAPI.setClientSSHPrincipals, setClientSSHPrincipals)
        on(router, AdminAPI.createSSHHostCertificate, status: .created, createSSHHostCertificate)
        on(router, AdminAPI.rotateSSHAuthority, rotateSSHAuthority)
        addFleet(to: router)
    }

    /// Registers `endpoint` behind the admin token; the handler answers its typed answer.
    func on<Body, Answer>(
        _ router: Router<ProviderRequestContext>, _ endpoint: AdminAPI.Endpoint<Body, Answer>, status: HTTPResponse.Status = .ok,
        _ handle: @escaping @Sendable (Request, ProviderRequestContext) async throws -> Answer
    ) {
        guard let method = HTTPRequest.Method(endpoint.method) else { preconditionFailure("admin endpoint \(endpoint.template) has no valid method") }
        let authorization = authorization
        router.on(RouterPath(endpoint.template), method: method) { request, context in
            try await authorization.check(request, context)
            return HTTPSupport.json(try await handle(request, context), status: status)
        }
    }

    /// A path parameter, percent-decoded: ``AdminAPI/Endpoint/path(_:)-(String...)``
    /// escapes every byte but letters, digits, `-` and `_`, and the router matches the path
    /// as sent, so a username with a `.` or a client id with a `:` arrives escaped. At most
    /// 256 bytes once decoded.
    func parameter(_ name: String, _ context: ProviderRequestContext) throws -> String {
        let raw = try context.parameters.require(name)
        guard raw.utf8.count <= 3 * 256, let decoded = raw.removingPercentEncoding, !decoded.isEmpty, decoded.utf8.count <= 256 else {
            throw ProviderError.badRequest(.invalidRequest, "\(name) must be 1 to 256 bytes, percent-encoded")
        }
        return decoded
    }

    @Sendable func createIdentity(_ request: Request, context: ProviderRequestContext) async throws -> AdminAPI.IdentityCreated {
        let creation = try await HTTPSupport.decode(AdminAPI.IdentityCreation.self, from: request, expected: "a JSON object with a username")
        let required = try creation.requireAttestation.map { text in
            guard let requirement = AttestationRequirement(rawValue: text) else {
                throw ProviderError.badRequest(.invalidRequest, "requireAttestation must be tpm")
            }
            return requirement
        }
        let (identity, bindURL) = try await admin.createIdentity(
            username: creation.username, email: creation.email, displayName: creation.displayName, requiredAttestation: required
        )
        context.logger.info("identity created", metadata: ["identity": .string(identity.id)])
        return AdminAPI.IdentityCreated(identity: identity.adminView, bindURL: bindURL.absoluteString)
    }

    @Sendable func listIdentities(_ request: Request, context: ProviderRequestContext) async throws -> AdminAPI.IdentityPage {
        let query = try HTTPSupport.query(request)
        if let name = query[AdminAPI.IdentityQuery.username] {
            let found = try await admin.find(name)
            return AdminAPI.IdentityPage(identities: found.map { [$0.adminView] } ?? [])
        }
        let limit = query[AdminAPI.IdentityQuery.limit].flatMap(Int.init) ?? 100
        let page = try await admin.identities(after: query[AdminAPI.IdentityQuery.after], limit: limit)
        let next = page.count == min(max(limit, 1), 500) ? page.last?.id : nil
        return AdminAPI.IdentityPage(identities: page.map(\.adminView), next: next)
    }

    @Sendable func findIdentity(_: Request, context: ProviderRequestContext) async throws -> AdminAPI.IdentityAnswer {
        guard let identity = try await admin.find(try parameter("identity", context)) else {
            throw ProviderError.notFound("no such identity")
        }
        return AdminAPI.IdentityAnswer(identity: identity.adminView)
    }

    @Sendable func deleteIdentity(_: Request, context: ProviderRequestContext) async throws -> AdminAPI.Deletion {
        let id = try parameter("identity", context)
        guard try await admin.deleteIdentity(id) else { throw ProviderError.notFound("no such identity") }
        context.logger.info("identity deleted", metadata: ["identity": .string(id)])
        return AdminAPI.Deletion(deleted: true)
    }

    @Sendable func createBindJob(_ request: Request, context: ProviderRequestContext) async throws -> AdminAPI.BindJobCreated {
        let identity = try parameter("identity", context)
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
        return AdminAPI.BindJobCreated(bindURL: url.absoluteString)
    }

    @Sendable func createResourceServer(_ request: Request, context: ProviderRequestContext) async throws -> AdminAPI.ResourceServerCreated {
        let creation = try await HTTPSupport.decode(AdminAPI.ResourceServerCreation.self, from: request, expected: "a JSON object with a name")
        let (id, secret, resource, format) = try await provider.resourceServers.create(
            name: creation.name, resource: creation.resource, format: creation.accessTokenFormat
        )
        context.logger.info("resource server created", metadata: ["resourceServer": .string(id)])
        return AdminAPI.ResourceServerCreated(
            id: id, secret: secret, introspectionEndpoint: provider.context.url(ProtocolPath.introspection).absoluteString, resource: resource,
            accessTokenFormat: format.rawValue
        )
    }

    @Sendable func deleteResourceServer(_: Request, context: ProviderRequestContext) async throws -> AdminAPI.Deletion {
        guard try await provider.resourceServers.delete(try parameter("server", context)) else {
            throw ProviderError.notFound("no such resource server")
        }
        return AdminAPI.Deletion(deleted: true)
    }

    @Sendable func createClient(_ request: Request, context: ProviderRequestContext) async throws -> AdminAPI.Client {
        let registration = try await HTTPSupport.decode(
            AdminAPI.Client.self, from: request, expected: "a JSON object with id, grantTypes and optionally name, jwks, redirectURIs, scopes"
        )
        let client = try await provider.clients.create(registration)
        context.logger.info("client registered", metadata: ["client": .string(client.id), "grants": .string(client.grantTypes.joined(separator: " "))])
        return client
    }

    @Sendable func listClients(_: Request, context: ProviderRequestContext) async throws -> AdminAPI.ClientList {
        AdminAPI.ClientList(clients: try await provider.clients.list())
    }

    @Sendable func deleteClient(_: Request, context: ProviderRequestContext) async throws -> AdminAPI.Deletion {
        let id = try parameter("client", context)
        guard try await provider.clients.delete(id) else { throw ProviderError.notFound("no such client") }
        context.logger.info("client deleted", metadata: ["client": .string(id)])
        return AdminAPI.Deletion(deleted: true)
    }

    @Sendable func listOutbox(_: Request, context: ProviderRequestContext) async throws -> AdminAPI.Outbox {
        let messages = try await admin.outboxMessages().map { message in
            AdminAPI.OutboxMessage(
                to: message.to, subject: message.subject, body: message.body, code: message.code,
                createdAt: AuditEvent.formatTime(message.createdAt)
            )
        }
        return AdminAPI.Outbox(messages: messages)
    }

    @Sendable func listCredentials(_: Request, context: ProviderRequestContext) async throws -> AdminAPI.CredentialList {
        let identity = try parameter("identity", context)
        let list = try await admin.credentials(of: identity).map { credential in
            AdminAPI.Credential(
                id: Base64URL.encode(credential.record.id), algorithm: credential.record.publicKey.algorithm.joseName,
                signCount: credential.record.signCount, revoked: credential.revoked,
                createdAt: AuditEvent.formatTime(credential.createdAt),
                lastUsedAt: credential.lastUsedAt.map { AuditEvent.formatTime($0) },
                transports: credential.record.transports, backupEligible: credential.record.backupEligible,
                backedUp: credential.record.backupState, registeredFrom: credential.registeredFrom.rawValue,
                attestation: credential.attestation, aaguid: credential.aaguidText
            )
        }
        return AdminAPI.CredentialList(credentials: list)
    }

    @Sendable func revokeCredential(_: Request, context: ProviderRequestContext) async throws -> AdminAPI.Revocation {
        guard let id = try? Base64URL.decode(try context.parameters.require("credential")), !id.isEmpty, id.count <= 1023 else {
            throw ProviderError.badRequest(.invalidRequest, "credential id is not base64url")
        }
        try await admin.revokeCredential(id)
        context.logger.info("credential revoked", metadata: ["credential": .string(String(Base64URL.encode(id).prefix(8)))])
        return AdminAPI.Revocation(revoked: true)
    }

    @Sendable func revokeConsent(_ request: Request, context: ProviderRequestContext) async throws -> AdminAPI.Revocation {
        let revocation = try await HTTPSupport.decode(AdminAPI.ConsentRevocation.self, from: request, expected: "a JSON object with client")
        guard revocation.client.utf8.count <= ClientMetadataDocuments.maximumURLLength else { throw ProviderError.notFound("no such consent") }
        let consents = Consents(context: provider.context, grants: provider.grants)
        guard try await consents.revoke(identityID: try parameter("identity", context), clientID: revocation.client) else {
            throw ProviderError.notFound("no such consent")
        }
        return AdminAPI.Revocation(revoked: true)
    }

    @Sendable func rotateSigningKey(_: Request, context: ProviderRequestContext) async throws -> AdminAPI.KeyRotation {
        let (kid, signsFrom) = try await provider.context.signingKeys.rotate()
        context.logger.info("signing key rotation started", metadata: ["kid": .string(kid)])
        return AdminAPI.KeyRotation(kid: kid, signsFrom: Int(signsFrom.timeIntervalSince1970))
    }
}
