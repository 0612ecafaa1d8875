import Foundation
import LatchkeyCrypto
@testable import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// A fleet's directory at the provider (docs/PROTOCOL.md section 14): an admin gives
/// identities POSIX accounts, makes groups, labels hosts and grants groups login and sudo
/// on labels; a host reads exactly what its labels are granted, paged at one version,
/// and a 304 when nothing changed.
@Suite("Provider: the hosts' directory")
struct HostDirectoryTests {
    typealias Admin = AdminAPIClient

    /// Creates `username` and gives it a POSIX account; its uid.
    @discardableResult
    static func person(_ admin: Admin, _ username: String, displayName: String? = nil) async throws -> Int64 {
        let created = try await admin.call(AdminAPI.createIdentity, body: .init(username: username, displayName: displayName))
        try #require(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        let account = try await admin.call(AdminAPI.setPOSIXAccount, username, body: AdminAPI.POSIXAccountChange())
        try #require(account.status == 200, "\(String(decoding: account.body, as: UTF8.self))")
        return try #require(account.answer).uid
    }

    /// A registered host client `id` with `labels`, and a client credentials token of scope `host`.
    static func host(_ issuer: URL, _ id: String, labels: [String], scopes: [String] = ["host"]) async throws -> (token: String, signer: ClientAssertionSigner) {
        let signer = try ClientAssertionSigner(key: SigningKey.generate(.es256))
        try await SSHClientCertificateTests.register(issuer, id, signer, scopes: ["host", "ssh"])
        let set = try await ProviderTests.admin(issuer).call(AdminAPI.setHostLabels, id, body: .init(labels: labels))
        try #require(set.status == 200, "\(String(decoding: set.body, as: UTF8.self))")
        return (try await SSHClientCertificateTests.token(issuer, id, signer, scopes: scopes), signer)
    }

    static func directory(
        _ issuer: URL, token: String, cursor: String? = nil, limit: Int? = nil, ifNoneMatch: String? = nil
    ) async throws -> (status: Int, page: HostDirectoryPage?, error: String?, etag: String?) {
        var components = try #require(URLComponents(url: issuer.appendingPathComponent(ProtocolPath.hostDirectory), resolvingAgainstBaseURL: false))
        var items: [URLQueryItem] = []
        if let cursor { items.append(URLQueryItem(name: HostDirectoryPage.Query.cursor, value: cursor)) }
        if let limit { items.append(URLQueryItem(name: HostDirectoryPage.Query.limit, value: String(limit))) }
        if !items.isEmpty { components.queryItems = items }
        var headers = ["Authorization": "Bearer \(token)"]
        if let ifNoneMatch { headers["If-None-Match"] = ifNoneMatch }
        let response = try await HTTPExchange.send("GET", try #require(components.url), headers: headers)
        let page = response.status == 200 ? try JSONDecoder().decode(HostDirectoryPage.self, from: response.body) : nil
        let error = response.status >= 400 ? (try? JSONDecoder().decode([String: String].self, from: response.body))?["error"] : nil
        return (response.status, page, error, response.headers["etag"])
    }

    /// Every page of a walk, put together.
    static func walk(_ issuer: URL, token: String, limit: Int? = nil) async throws -> (accounts: [HostDirectoryPage.Account], groups: [String: (gid: Int64, sudo: Bool, members: [String])]) {
        var accounts: [HostDirectoryPage.Account] = []
        var groups: [String: (gid: Int64, sudo: Bool, members: [String])] = [:]
        var cursor: String?
        var pages = 0
        repeat {
            let (status, page, error, _) = try await directory(issuer, token: token, cursor: cursor, limit: limit)
            try #require(status == 200, "\(error ?? "-")")
            let answer = try #require(page)
            accounts += answer.accounts
            for group in answer.groups {
                groups[group.name, default: (group.gid, group.sudo, [])].members += group.members
            }
            cursor = answer.next
            pages += 1
        } while cursor != nil && pages < 10_000
        return (accounts, groups)
    }

    static func status<Answer>(_ reply: AdminAPIClient.Reply<Answer>) -> String {
        reply.status < 300 ? "\(reply.status)" : "\(reply.status) \(reply.refusal?.error?.rawValue ?? "-")"
    }

    @Test("ops may log in and use sudo on web hosts: a web host reads exactly ops and its members' accounts, a db host none of them, a host without labels nothing; unchanged is a 304; every change is an audit event", arguments: TestStore.available)
    func fleet(engine: TestStore) async throws {
        try await ProviderTests.withProvider(engine) { issuer, _ in
            let admin = ProviderTests.admin(issuer)
            let ada = try await Self.person(admin, "ada", displayName: "Ada: Lovelace\u{202E}")
            let grace = try await Self.person(admin, "grace")
            let bob = try await Self.person(admin, "bob")
            _ = try await admin.call(AdminAPI.createIdentity, body: .init(username: "nopos"))
            #expect(Set([ada, grace, bob]).count == 3 && [ada, grace, bob].allSatisfy { (65536...99999).contains($0) })
            for group in ["ops", "dba"] {
                #expect(Self.status(try await admin.call(AdminAPI.createGroup, body: .init(name: group))) == "201")
            }
            for (group, member) in [("ops", "ada"), ("ops", "grace"), ("ops", "nopos"), ("dba", "bob")] {
                #expect(Self.status(try await admin.call(AdminAPI.addGroupMember, group, member)) == "200")
            }
            #expect(Self.status(try await admin.call(AdminAPI.grantHostAccess, "web", "ops", body: .init(sudo: true))) == "200")
            #expect(Self.status(try await admin.call(AdminAPI.grantHostAccess, "db", "dba", body: .init())) == "200")
            let web = try await Self.host(issuer, "web-1", labels: ["web"])
            let db = try await Self.host(issuer, "db-1", labels: ["db"])
            let bare = try await Self.host(issuer, "bare-1", labels: [])

            let seen = try await Self.walk(issuer, token: web.token)
            #expect(seen.accounts.map(\.name) == ["ada", "grace"], "members with accounts only: nopos has none, bob is not in ops")
            #expect(seen.accounts.map(\.uid) == [ada, grace] && seen.accounts.allSatisfy { $0.gid == $0.uid && $0.shell == "/bin/bash" && $0.home == "/home/\($0.name)" })
            #expect(seen.accounts.first?.gecos == "Ada  Lovelace ", "a display name's : and bidi controls never reach a passwd line")
            #expect(seen.groups.count == 1 && seen.groups["ops"]?.sudo == true && seen.groups["ops"]?.members == ["ada", "grace"])
            let dbSeen = try await Self.walk(issuer, token: db.token)
            #expect(dbSeen.accounts.map(\.name) == ["bob"] && dbSeen.groups.keys.sorted() == ["dba"] && dbSeen.groups["dba"]?.sudo == false)
            let bareSeen = try await Self.walk(issuer, token: bare.token)
            #expect(bareSeen.accounts.isEmpty && bareSeen.groups.isEmpty)

            // Unchanged: a 304 with the same tag; a change anywhere: a new version.
            let first = try await Self.directory(issuer, token: web.token)
            let tag = try #require(first.etag)
            #expect(first.page.map { "\"\($0.version)\"" } == tag)
            let again = try await Self.directory(issuer, token: web.token, ifNoneMatch: tag)
            #expect(again.status == 304 && again.etag == tag)
            #expect(try await Self.directory(issuer, token: web.token, ifNoneMatch: "W/\(tag)").status == 304, "compared weakly (RFC 9110 §13.1.2)")
            #expect(Self.status(try await admin.call(AdminAPI.removeGroupMember, "ops", "grace")) == "200")
            let changed = try await Self.directory(issuer, token: web.token, ifNoneMatch: tag)
            #expect(changed.status == 200 && changed.etag != tag && changed.page?.accounts.map(\.name) == ["ada"])

            // Revoked: the web host sees no one; relabelled db, it sees the db view.
            #expect(Self.status(try await admin.call(AdminAPI.revokeHostAccess, "web", "ops")) == "200")
            #expect(try await Self.walk(issuer, token: web.token).accounts.isEmpty)
            #expect(Self.status(try await admin.call(AdminAPI.setHostLabels, "web-1", body: .init(labels: ["db", "db"]))) == "200")
            #expect(try await Self.walk(issuer, token: web.token).accounts.map(\.name) == ["bob"])

            // The admin's view of groups.
            let groups = try #require(try await admin.call(AdminAPI.listGroups).answer).groups
            #expect(groups.map(\.name) == ["dba", "ops"] && groups.first?.loginLabels == ["db"] && groups.last?.members == 2)

            // Every change was written down.
            let posix = try await AuditLogTests.events(issuer, type: AuditEventType.posixChanged.rawValue)
            #expect(posix.count == 3 && posix.allSatisfy { $0.details?.change == "set" && $0.actor.kind == .admin })
            let group = try await AuditLogTests.events(issuer, type: AuditEventType.groupChanged.rawValue)
            #expect(group.map { $0.details?.change ?? "-" }.sorted() == ["created", "created", "member.added", "member.added", "member.added", "member.added", "member.removed"])
            let access = try await AuditLogTests.events(issuer, type: AuditEventType.hostAccessChanged.rawValue)
            #expect(access.map { $0.details?.change ?? "-" }.sorted() == ["granted", "granted", "labels.set", "labels.set", "labels.set", "labels.set", "revoked"])
            #expect(access.first { $0.details?.change == "granted" && $0.details?.group == "ops" }?.details?.sudo == true)
        }
    }

    @Test("a host's token is its own: a person's token, a host token without scope host, no token, and a deleted host's token are refused at once", arguments: TestStore.available)
    func hostTokens(engine: TestStore) async throws {
        try await ProviderTests.withProvider(engine) { issuer, authenticator in
            let admin = ProviderTests.admin(issuer)
            try await Self.person(admin, "ada")
            let web = try await Self.host(issuer, "web-1", labels: ["web"])
            #expect(try await Self.directory(issuer, token: web.token).status == 200)
            // A person's token (ssh scope, through the CLI client).
            let (_, person) = try await SSHAuthorityTests.tokens(issuer, authenticator, username: "grace")
            let refused = try await Self.directory(issuer, token: person.accessToken)
            #expect(refused.status == 403 && refused.error == "insufficient_scope")
            // The host's own token without the host scope.
            let sshOnly = try await SSHClientCertificateTests.token(issuer, "web-1", web.signer, scopes: ["ssh"])
            let scoped = try await Self.directory(issuer, token: sshOnly)
            #expect(scoped.status == 403 && scoped.error == "insufficient_scope")
            // No token, a made-up one.
            let none = try await HTTPExchange.send("GET", issuer.appendingPathComponent(ProtocolPath.hostDirectory))
            #expect(none.status == 401)
            #expect(try await Self.directory(issuer, token: "made-up").status == 401)
            // DPoP when the host offers it: the token is bound, a proof is needed on every
            // request, and the token alone (as bearer) is refused.
            let dpop = try DPoPSigner(key: SigningKey.generate(.es256))
            let client = try OAuthClient(configuration: .init(
                issuer: issuer, clientID: "web-1", redirectURI: try ProviderHarness.callback, authentication: .privateKeyJWT(web.signer, audience: .issuer)
            ))
            let bound = try await client.clientCredentials(scopes: ["host"], dpop: dpop)
            #expect(bound.tokenType == "DPoP")
            let url = issuer.appendingPathComponent(ProtocolPath.hostDirectory)
            let proved = try await HTTPExchange.send("GET", url, headers: try dpop.headers(method: "GET", url: url, accessToken: bound.accessToken))
            #expect(proved.status == 200)
            let provedPage = try JSONDecoder().decode(HostDirectoryPage.self, from: proved.body)
            #expect(provedPage.accounts.isEmpty)
            #expect(try await Self.directory(issuer, token: bound.accessToken).status == 401, "a bound token without its proof")
            let otherKey = try DPoPSigner(key: SigningKey.generate(.es256))
            let stolen = try await HTTPExchange.send("GET", url, headers: try otherKey.headers(method: "GET", url: url, accessToken: bound.accessToken))
            #expect(stolen.status == 401, "a proof by another key")
            // Deleted: 401 on the next request.
            #expect(try await admin.call(AdminAPI.deleteClient, "web-1").status == 200)
            #expect(try await Self.directory(issuer, token: web.token).status == 401)
            // Labels for a client that does not exist.
            #expect(Self.status(try await admin.call(AdminAPI.setHostLabels, "web-1", body: .init(labels: ["web"]))) == "404 not_found")
        }
    }

    @Test("admin path parameters arrive as named: a username with a dot or a non-ASCII letter, a client id with dots")
    func escapedParameters() async throws {
        try await ProviderTests.withProvider(.sqlite) { issuer, _ in
            let admin = ProviderTests.admin(issuer)
            for name in ["ada.l", "zoë"] {
                #expect(try await admin.call(AdminAPI.createIdentity, body: .init(username: name)).status == 201)
                #expect(try await admin.call(AdminAPI.identity, name).answer?.identity.username == name, "\(name)")
            }
            let host = try await Self.host(issuer, "web-1.example.com", labels: ["web"])
            #expect(try await Self.directory(issuer, token: host.token).status == 200)
            #expect(try await admin.call(AdminAPI.setClientSSHPrincipals, "web-1.example.com", body: .init(principals: ["deploy"])).status == 200)
            #expect(try await admin.call(AdminAPI.deleteClient, "web-1.example.com").status == 200)
            #expect(try await Self.directory(issuer, token: host.token).status == 401)
        }
    }

    @Test("a walk is of one version: a page after a change is directory_changed, and the walk starts again; malformed cursors and limits are refused", arguments: TestStore.available)
    func pagedWalk(engine: TestStore) async throws {
        try await ProviderTests.withProvider(engine) { issuer, _ in
            let admin = ProviderTests.admin(issuer)
            #expect(Self.status(try await admin.call(AdminAPI.createGroup, body: .init(name: "ops"))) == "201")
            for index in 0..<25 {
                try await Self.person(admin, "user\(index)")
                #expect(Self.status(try await admin.call(AdminAPI.addGroupMember, "ops", "user\(index)")) == "200")
            }
            #expect(Self.status(try await admin.call(AdminAPI.grantHostAccess, "web", "ops", body: .init())) == "200")
            let web = try await Self.host(issuer, "web-1", labels: ["web"])
            // Pages of 10 entries: 25 accounts, then the group and its 25 members.
            let seen = try await Self.walk(issuer, token: web.token, limit: 10)
            #expect(seen.accounts.count == 25 && Set(seen.accounts.map(\.uid)).count == 25)
            #expect(seen.groups["ops"]?.members == (0..<25).map { "user\($0)" })
            // A change mid-walk.
            let first = try await Self.directory(issuer, token: web.token, limit: 10)
            let next = try #require(first.page?.next)
            try await Self.person(admin, "late")
            let stale = try await Self.directory(issuer, token: web.token, cursor: next, limit: 10)
            #expect(stale.status == 409 && stale.error == "directory_changed")
            // Cursors and limits a stranger makes up.
            for cursor in ["", "x", "1.a", "1.b5", "-1.a5", "1.g5", "1.a5.5", "1.g-5.1", String(repeating: "9", count: 65), "1.a99999999999999999999"] {
                let answer = try await Self.directory(issuer, token: web.token, cursor: cursor)
                #expect(answer.status == 400 && answer.error == "invalid_request", "cursor \(cursor)")
            }
            #expect(try await Self.directory(issuer, token: web.token, limit: 1).page?.accounts.count == 10, "a limit below 10 is 10")
            #expect(try await Self.directory(issuer, token: web.token, limit: 1_000_000).status == 400)
        }
    }
}
