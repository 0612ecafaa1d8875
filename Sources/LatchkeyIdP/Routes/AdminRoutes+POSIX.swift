import Foundation
import Hummingbird
import LatchkeyOAuth
import LatchkeyProtocol

/// The fleet's admin endpoints (docs/PROTOCOL.md section 14): POSIX accounts, renames,
/// groups and their members, host labels and host access.
extension AdminRoutes {
    func addFleet(to router: Router<ProviderRequestContext>) {
        on(router, AdminAPI.setPOSIXAccount, setPOSIXAccount)
        on(router, AdminAPI.unsetPOSIXAccount, unsetPOSIXAccount)
        on(router, AdminAPI.renameIdentity, renameIdentity)
        on(router, AdminAPI.createGroup, status: .created, createGroup)
        on(router, AdminAPI.listGroups, listGroups)
        on(router, AdminAPI.deleteGroup, deleteGroup)
        on(router, AdminAPI.addGroupMember, addGroupMember)
        on(router, AdminAPI.removeGroupMember, removeGroupMember)
        on(router, AdminAPI.setHostLabels, setHostLabels)
        on(router, AdminAPI.grantHostAccess, grantHostAccess)
        on(router, AdminAPI.revokeHostAccess, revokeHostAccess)
    }

    @Sendable func setPOSIXAccount(_ request: Request, context: ProviderRequestContext) async throws -> AdminAPI.POSIXAccount {
        let change = try await HTTPSupport.decode(AdminAPI.POSIXAccountChange.self, from: request, expected: "a JSON object (shell, home, gecos)")
        return try await provider.posixAccounts.set(try parameter("identity", context), change)
    }

    @Sendable func unsetPOSIXAccount(_: Request, context: ProviderRequestContext) async throws -> AdminAPI.Deletion {
        AdminAPI.Deletion(deleted: try await provider.posixAccounts.unset(try parameter("identity", context)))
    }

    @Sendable func renameIdentity(_ request: Request, context: ProviderRequestContext) async throws -> AdminAPI.IdentityRenamed {
        let asked = try await HTTPSupport.decode(AdminAPI.IdentityRename.self, from: request, expected: "a JSON object with a username")
        let (identity, uid) = try await provider.administration.renameIdentity(try parameter("identity", context), to: asked.username)
        return AdminAPI.IdentityRenamed(identity: identity.adminView, uid: uid)
    }

    @Sendable func createGroup(_ request: Request, context: ProviderRequestContext) async throws -> AdminAPI.Group {
        let asked = try await HTTPSupport.decode(AdminAPI.GroupCreation.self, from: request, expected: "a JSON object with a name")
        return try await provider.posixGroups.create(asked.name)
    }

    @Sendable func listGroups(_ request: Request, context: ProviderRequestContext) async throws -> AdminAPI.GroupPage {
        let query = try HTTPSupport.query(request)
        let limit = query[AdminAPI.GroupQuery.limit].flatMap(Int.init) ?? 100
        let after = query[AdminAPI.GroupQuery.after]
        guard (after?.utf8.count ?? 0) <= POSIXName.maximumBytes else { throw ProviderError.badRequest(.invalidRequest, "after must be a group name") }
        let page = try await provider.posixGroups.list(after: after, limit: limit)
        return AdminAPI.GroupPage(groups: page, next: page.count == min(max(limit, 1), 500) ? page.last?.name : nil)
    }

    @Sendable func deleteGroup(_: Request, context: ProviderRequestContext) async throws -> AdminAPI.Deletion {
        guard try await provider.posixGroups.delete(try parameter("group", context)) else { throw ProviderError.notFound("no such group") }
        return AdminAPI.Deletion(deleted: true)
    }

    @Sendable func addGroupMember(_: Request, context: ProviderRequestContext) async throws -> AdminAPI.Group {
        try await provider.posixGroups.setMember(try parameter("identity", context), of: try parameter("group", context), member: true)
    }

    @Sendable func removeGroupMember(_: Request, context: ProviderRequestContext) async throws -> AdminAPI.Group {
        try await provider.posixGroups.setMember(try parameter("identity", context), of: try parameter("group", context), member: false)
    }

    @Sendable func setHostLabels(_ request: Request, context: ProviderRequestContext) async throws -> AdminAPI.HostLabels {
        let asked = try await HTTPSupport.decode(AdminAPI.HostLabels.self, from: request, expected: "a JSON object with labels")
        return AdminAPI.HostLabels(labels: try await provider.hostAccess.setLabels(asked.labels, ofClient: try parameter("client", context)))
    }

    @Sendable func grantHostAccess(_ request: Request, context: ProviderRequestContext) async throws -> AdminAPI.HostAccess {
        let body = try await HTTPSupport.body(request)
        let asked = try body.isEmpty ? AdminAPI.HostAccessGrant() : HTTPSupport.decode(AdminAPI.HostAccessGrant.self, from: body, expected: "a JSON object (sudo)")
        return try await provider.hostAccess.grant(label: try parameter("label", context), group: try parameter("group", context), sudo: asked.sudo ?? false)
    }

    @Sendable func revokeHostAccess(_: Request, context: ProviderRequestContext) async throws -> AdminAPI.Deletion {
        guard try await provider.hostAccess.revoke(label: try parameter("label", context), group: try parameter("group", context)) else {
            throw ProviderError.notFound("that group has no access on that label")
        }
        return AdminAPI.Deletion(deleted: true)
    }
}
