import Foundation
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// The audit log abused (docs/SECURITY.md, "Audit log"): its reading endpoint given
/// absurd pages and cursors, forged user agents and addresses written into events, and
/// floods that would fill the disk one event at a time.
extension HostileInputSuite {
    @Test("/admin/events refuses a limit of a billion, a cursor that is not a number, a malformed time and an oversized type, each 400")
    func auditQueryBounds() async throws {
        try await ProviderHarness.run { provider in
            for query in [
                [(AdminAPI.EventQuery.limit, "1000000000")], [(AdminAPI.EventQuery.limit, "0")], [(AdminAPI.EventQuery.after, "abc")],
                [(AdminAPI.EventQuery.after, "-1")], [(AdminAPI.EventQuery.after, "99999999999999999999999")],
                [(AdminAPI.EventQuery.since, "yesterday")], [(AdminAPI.EventQuery.type, String(repeating: "t", count: 65))],
                [(AdminAPI.EventQuery.subject, String(repeating: "s", count: 5000))],
            ] {
                let reply = try await provider.admin.call(AdminAPI.events, query: query)
                #expect(reply.status == 400 && reply.refusal?.error == .invalidRequest, "\(query): \(reply.status)")
            }
            let page = try await provider.admin.call(AdminAPI.events, query: [(AdminAPI.EventQuery.limit, "1000")])
            #expect(page.status == 200)
        }
    }

    @Test("a forged User-Agent (escape sequences, bidi controls, 4 KB) and X-Forwarded-For reach an event bounded and escaped, the address as the provider saw it")
    func auditForgedRequester() async throws {
        try await ProviderHarness.run { provider in
            let clients = provider.issuer.appendingPathComponent(try #require(AdminAPI.listClients.path()))
            // Control characters never get past the HTTP parser (RFC 9110 §5.5): refused, nothing
            // written. Sent raw: Latchkey's own client refuses to send such a field at all.
            let escapes = try await RawConnection.open(port: provider.port).exchange(
                HTTPMethod.get, clients.path, headers: ["Authorization": "Bearer wrong", "User-Agent": "Mozilla/5.0 \u{1B}]0;owned\u{07}\u{1B}[2J"]
            )
            #expect(escapes.status == 400)
            #expect(try await provider.auditEvents().isEmpty)
            // What does get past (bidi overrides, 4 KB) is kept bounded and escaped.
            let agent = "Mozilla/5.0 \u{202E}gnp.exe\u{202C} \\x1b[31m " + String(repeating: "A", count: 4000)
            let response = try await HTTPExchange.send(
                HTTPMethod.get, clients, headers: ["Authorization": "Bearer wrong", "User-Agent": agent, "X-Forwarded-For": "203.0.113.9"]
            )
            #expect(response.status == 401)
            let event = try #require(try await provider.auditEvents().first { $0.type == .adminTokenRefused })
            let kept = try #require(event.userAgent)
            #expect(kept.unicodeScalars.count <= AuditEvent.maximumUserAgentLength + 16, "\(kept.unicodeScalars.count) scalars")
            #expect(!kept.unicodeScalars.contains { $0.isUnsafeOnTerminal }, "no control or bidi scalar is kept raw: \(kept.debugDescription)")
            #expect(kept.hasPrefix("Mozilla/5.0 \\u{202E}gnp.exe\\u{202C} \\\\x1b[31m AAA"), "\(kept)")
            #expect(event.address == "127.0.0.1", "no trusted proxy: the forwarded address is not believed")
        }
    }

    @Test("floods are summarised: 200 refused token requests from one address and 40 wrong admin tokens write one event each, not one per try")
    func auditFloodsSummarised() async throws {
        try await ProviderHarness.run { provider in
            let token = provider.issuer.appendingPathComponent(ProtocolPath.token)
            let tally = await RawConnection.flood(count: 200, parallel: 8) { _ in
                try await HTTPExchange.form(token, TokenRequest(grantType: .authorizationCode, code: "made-up", clientID: "latchkey-cli").formItems).status
            }
            #expect(tally[429, default: 0] >= 70, "\(tally)")
            // From another address than the test's own admin calls, which the guesses lock out.
            let clients = "/" + (try #require(AdminAPI.listClients.path()))
            for _ in 0..<40 {
                let connection = try await RawConnection.open(port: provider.port, source: "127.0.0.9")
                _ = try await connection.exchange(HTTPMethod.get, clients, headers: ["Authorization": "Bearer guess"])
            }
            let events = try await provider.auditEvents()
            #expect(events.filter { $0.type == .rateLimitEngaged }.count == 1, "\(events.map(\.type))")
            #expect(events.filter { $0.type == .adminTokenRefused }.count == 1, "\(events.map(\.type))")
            #expect(events.count == 2, "a refused code changes nothing, so writes nothing: \(events.map(\.type))")
            let engaged = try #require(events.first { $0.type == .rateLimitEngaged })
            #expect(engaged.details?.limit == ProtocolPath.token && engaged.details?.windowSeconds == 60 && engaged.error == "slow_down")
        }
    }

    /// Every public endpoint that takes a request, flooded from an address of its own past
    /// the rate limit: what the log keeps is bounded by the limit, never by the flood.
    static let floodedEndpoints: [(method: String, target: String, limited: Bool)] = [
        ("POST", "/" + ProtocolPath.token, true), ("POST", "/" + ProtocolPath.deviceAuthorization, true),
        ("POST", "/" + ProtocolPath.authorizationChallenge, true), ("POST", "/" + ProtocolPath.deviceApproval, true),
        ("POST", "/\(ProtocolPath.deviceApproval)/made-up", true), ("POST", "/v1/authenticate/made-up", true),
        ("POST", "/v1/authenticate/made-up/cancel", true), ("POST", "/v1/bind/made-up/code", true),
        ("POST", "/" + ProtocolPath.transfers, true), ("POST", "/v1/transfers/made-up/open", true),
        ("POST", "/v1/transfers/made-up/approve", true), ("POST", "/v1/transfers/made-up/decline", true),
        ("POST", "/v1/transfers/made-up/cancel", true), ("POST", "/" + ProtocolPath.transferRedemption, true),
        ("POST", "/v1/transfers/made-up/import", true), ("POST", "/" + ProtocolPath.attestationActivations, true),
        ("POST", "/" + ProtocolPath.attestationCertificates, true), ("POST", "/" + ProtocolPath.signUp, true),
        ("POST", "/v1/signup/made-up/profile", true), ("POST", "/v1/signup/made-up/code", true),
        ("POST", "/" + ProtocolPath.recovery, true), ("POST", "/v1/recovery/made-up/code", true),
        // Not limited: each needs a client's credential or a bind job's secret path, and
        // refusing them changes nothing, so they must write nothing at all.
        ("POST", "/" + ProtocolPath.introspection, false), ("POST", "/" + ProtocolPath.revocation, false),
        ("POST", "/v1/bind/made-up", false), ("POST", "/v1/bind/made-up/terms", false),
        ("GET", "/" + ProtocolPath.userInfo, false), ("GET", "/v1/bind/made-up", false), ("GET", "/v1/authenticate/made-up", false),
        ("GET", "/v1/transfers/made-up", false), ("GET", "/v1/transfers/made-up/import", false),
        ("GET", Self.authorizeTarget(hint: "nobody"), false), ("GET", "/" + ProtocolPath.deviceVerification + "?user_code=WDJB-MJHT", false),
    ]

    @Test("floods through every public endpoint are summarised: one ratelimit.engaged per limited endpoint and address, nothing for refusals that changed nothing, and forged assertions at most the limit's worth of signin.failed")
    func auditFloodsEveryEndpoint() async throws {
        let limit = 5
        try await ProviderHarness.run(nil, { $0.rateLimitPerMinute = limit }) { provider in
            let junk: JSONValue = ["client_id": "latchkey-cli", "token": "made-up", "code": "00000000", "user_code": "WDJB-MJHT"]
            for (index, endpoint) in Self.floodedEndpoints.enumerated() {
                let tally = await RawConnection.flood(count: 4 * limit, parallel: 4) { _ in
                    try await provider.raw(endpoint.method, endpoint.target, json: endpoint.method == "POST" ? junk : nil, from: Self.attacker(100 + index)).0
                }
                #expect(tally[-1] == nil, "\(endpoint.target): \(tally)")
                if endpoint.limited { #expect(tally[429] == 3 * limit, "\(endpoint.target): \(tally)") }
            }
            var events = try await provider.auditEvents()
            let engaged = events.filter { $0.type == .rateLimitEngaged }
            #expect(engaged.count == Self.floodedEndpoints.filter(\.limited).count, "\(engaged.map { $0.address ?? "-" })")
            #expect(Set(engaged.compactMap(\.address)).count == engaged.count, "one per address")
            #expect(events.allSatisfy { $0.type == .rateLimitEngaged }, "\(events.filter { $0.type != .rateLimitEngaged }.map(\.type))")

            // A real sign-in session, then forged assertions at it: each refusal of an
            // assertion is a decision (signin.failed), up to the limit; then one summary.
            let (_, started) = try await provider.raw("GET", Self.authorizeTarget(hint: "nobody"), from: "127.0.0.1")
            let authenticate = try #require(started["authenticateURL"]?.stringValue)
            let forged: JSONValue = [
                "id": "bWFkZS11cC1jcmVkZW50aWFs", "rawId": "bWFkZS11cC1jcmVkZW50aWFs", "type": "public-key", "clientExtensionResults": [:],
                "response": ["clientDataJSON": "e30", "authenticatorData": "AAAA", "signature": "AAAA"],
            ]
            let source = Self.attacker(99)
            let tally = await RawConnection.flood(count: 10 * limit, parallel: 4) { _ in
                try await provider.raw("POST", authenticate, json: forged, from: source).0
            }
            #expect(tally[429] == 9 * limit, "\(tally)")
            events = try await provider.auditEvents().filter { $0.address == source }
            let failed = events.filter { $0.type == .signInFailed }
            #expect((1...limit).contains(failed.count), "\(events.map(\.type))")
            #expect(failed.allSatisfy { $0.actor.kind == .anonymous && $0.subject == nil && $0.details?.credential == "bWFkZS11cC1jcmVkZW50aWFs" })
            #expect(events.filter { $0.type == .rateLimitEngaged }.count == 1 && events.count == failed.count + 1, "\(events.map(\.type))")
        }
    }

    /// Found in CI: SQLite's group commit runs a transaction on whichever task drains its
    /// group, and events written there took that task's requester (another request's
    /// address and agent, or none).
    @Test("under concurrent writes (SQLite's group commit), each event names its own request's address and user agent, never another's", arguments: TestStore.available)
    func auditRequesterUnderLoad(engine: TestStore) async throws {
        try await ProviderHarness.run(engine, { _ in }) { provider in
            let target = "/" + AdminAPI.createIdentity.template
            let count = 40
            let tally = await RawConnection.flood(count: count, parallel: 16) { index in
                try await RawConnection.open(port: provider.port, source: RawConnection.standIn(index)).exchange(
                    HTTPMethod.post, target, json: ["username": .string("load-\(index)")],
                    headers: ["Authorization": "Bearer \(ProviderHarness.adminToken)", "User-Agent": "agent-\(index)"]
                ).status
            }
            #expect(tally[201] == count, "\(tally)")
            let events = try await provider.auditEvents().filter { $0.type == .identityCreated }
            #expect(events.count == count)
            for event in events {
                let name = try #require(event.details?.username)
                let index = try #require(Int(name.dropFirst("load-".count)))
                #expect(event.address == RawConnection.standIn(index) && event.userAgent == "agent-\(index)", "\(name): \(event.address ?? "-") \(event.userAgent ?? "-")")
            }
        }
    }
}
