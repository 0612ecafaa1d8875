import Foundation
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// How many SQL statements and transactions each step of a sign-in costs the store, read
/// from the provider's own counters at `/metrics` (docs/PERFORMANCE.md, "Statements per
/// sign-in"). A statement is a round trip on PostgreSQL and a B-tree walk on SQLite: a
/// change that adds one to the hot path shows here first, and must say why.
@Suite("Provider store: statements per sign-in")
struct StatementCountTests {
    /// What one step cost the store.
    struct Cost: Equatable, CustomStringConvertible {
        var statements: Int
        var transactions: Int
        var description: String { "\(statements) statements in \(transactions) transactions" }

        /// The lesser of two measurements of one step.
        static func least(_ a: Cost, _ b: Cost) -> Cost {
            Cost(statements: min(a.statements, b.statements), transactions: min(a.transactions, b.transactions))
        }
    }

    /// How often each flow is measured: the provider's own background work (pruning,
    /// the outbox, the signing keys' reload) runs now and then and adds to whichever
    /// step it overlaps, never takes away, so the least of a few runs is the step's cost.
    static let rounds = 3

    /// The least cost of each step over ``rounds`` runs of `flow`.
    static func leastCosts(_ flow: () async throws -> [Cost]) async throws -> [Cost] {
        var least = try await flow()
        for _ in 1..<rounds {
            least = zip(least, try await flow()).map(Cost.least)
        }
        return least
    }

    /// The store's counters as `/metrics` shows them.
    static func counters(_ issuer: URL) async throws -> Cost {
        let response = try await HTTP1Transport().send(TransportRequest(
            method: HTTPMethod.get, url: issuer.appendingPathComponent("metrics"),
            headers: ["Authorization": "Bearer \(ProviderHarness.adminToken)"], body: nil
        ))
        try #require(response.status == 200)
        let text = String(decoding: response.body, as: UTF8.self)
        func value(_ name: String) throws -> Int {
            let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(name + " ") }, "no \(name) in /metrics")
            return try #require(Int(line.split(separator: " ")[1]))
        }
        return Cost(statements: try value("latchkey_store_statements_total"), transactions: try value("latchkey_store_transactions_total"))
    }

    /// No background sealing while steps are counted: the counters are the store's, and a
    /// seal would land in whichever step it met (its cost is the benchmark's to measure).
    static let quiet: @Sendable (inout ProviderConfiguration) -> Void = { $0.auditSealInterval = .seconds(3600) }

    /// What `step` cost the store: the counters after it, less the counters before.
    static func cost(_ issuer: URL, _ step: () async throws -> Void) async throws -> Cost {
        let before = try await counters(issuer)
        try await step()
        let after = try await counters(issuer)
        return Cost(statements: after.statements - before.statements, transactions: after.transactions - before.transactions)
    }

    /// The assertion: the credential and whether the session was spent, in one lookup; then
    /// the session spent, the counter recorded, the family and its code, and the
    /// `signin.succeeded` audit event, which PostgreSQL does in one statement that commits
    /// by itself and SQLite in five statements of one transaction (`GrantLedger.complete`).
    static func assertionBudget(_ engine: TestStore) -> Cost {
        engine == .postgres ? Cost(statements: 2, transactions: 2) : Cost(statements: 6, transactions: 2)
    }

    /// The token: the code with its family read, then the code spent, the grants capped,
    /// both tokens issued and the `token.issued` audit event written. On PostgreSQL a
    /// sealed bearer code (`CodeTicket`) is redeemed by one statement that commits by
    /// itself, with no read before it (`GrantLedger.redeemInOneStatement`): one round
    /// trip, counted as a transaction. On SQLite, five statements in one transaction
    /// (`GrantLedger.issueTokens(for:now:in:)`).
    static func tokenBudget(_ engine: TestStore) -> Cost {
        engine == .postgres ? Cost(statements: 1, transactions: 1) : Cost(statements: 5, transactions: 1)
    }

    @Test("a redirect-flow sign-in: authorize, options, assertion and token each run at most their budget of statements", arguments: TestStore.available)
    func redirectFlow(engine: TestStore) async throws {
        try await ProviderTests.withProvider(engine, Self.quiet) { issuer, authenticator in
            _ = try await ProviderTests.bind(issuer, authenticator)
            let client = try ProviderTests.client(issuer)
            // A first sign-in loads the signing key and other once-per-instance state.
            _ = try await ProviderTests.signIn(issuer, authenticator, client: client)

            let costs = try await Self.leastCosts {
                let authorization = try await client.authorizationRequest(scopes: ["openid", "profile"], additionalParameters: ["login_hint": "ada"])
                var answer: JSONValue = [:]
                let authorize = try await Self.cost(issuer) {
                    let (status, body) = try await ProviderTests.request("GET", authorization.url, headers: ["Accept": "application/json"])
                    #expect(status == 200, "\(body)")
                    answer = body
                }
                let authenticateURL = try ProviderTests.url(answer["authenticateURL"]?.stringValue)
                var challenge: JSONValue = [:]
                let options = try await Self.cost(issuer) {
                    challenge = try await ProviderTests.request("GET", authenticateURL).1
                }
                let (assertion, _) = try authenticator.getAssertion(try PublicKeyCredentialRequestOptionsJSON(json: challenge.json()), origin: ProviderTests.origin(issuer))
                var redirect: JSONValue = [:]
                let verify = try await Self.cost(issuer) {
                    let (status, body) = try await ProviderTests.request("POST", authenticateURL, json: try assertion.json())
                    #expect(status == 200, "\(body)")
                    redirect = body
                }
                let code = try await client.authorizationCode(from: try ProviderTests.url(redirect["redirectURL"]?.stringValue), for: authorization)
                let token = try await Self.cost(issuer) {
                    _ = try await client.exchange(code: code, for: authorization)
                }
                return [authorize, options, verify, token]
            }
            let (authorize, options, verify, token) = (costs[0], costs[1], costs[2], costs[3])
            print("Statements per sign-in (\(engine)): authorize \(authorize), options \(options), assertion \(verify), token \(token)")
            #expect(authorize == Cost(statements: 1, transactions: 1), "authorize: \(authorize)")
            #expect(options == Cost(statements: 0, transactions: 0), "options: \(options)")
            #expect(verify == Self.assertionBudget(engine), "assertion: \(verify)")
            #expect(token == Self.tokenBudget(engine), "token: \(token)")
        }
    }

    @Test("a first-party sign-in: the challenge, the assertion and the token each run at most their budget of statements", arguments: TestStore.available)
    func challengeFlow(engine: TestStore) async throws {
        try await ProviderTests.withProvider(engine, Self.quiet) { issuer, authenticator in
            _ = try await ProviderTests.bind(issuer, authenticator)
            _ = try await ProviderTests.signIn(issuer, authenticator, client: try ProviderTests.client(issuer))
            let costs = try await Self.leastCosts {
                let pkce = try PKCE.generate()
                var first = AuthorizationChallengeTests.Reply(status: 0, headers: [:], body: Data())
                let start = try await Self.cost(issuer) {
                    first = try await AuthorizationChallengeTests.challenge(issuer, pkce: pkce, loginHint: "ada")
                }
                let (session, options) = try AuthorizationChallengeTests.options(first)
                let (assertion, _) = try authenticator.getAssertion(options, origin: ProviderTests.origin(issuer))
                var second = AuthorizationChallengeTests.Reply(status: 0, headers: [:], body: Data())
                let verify = try await Self.cost(issuer) {
                    second = try await AuthorizationChallengeTests.answer(issuer, session: session, assertion: assertion)
                }
                let code = try #require(second.json["authorization_code"]?.stringValue, "\(second.text)")
                let token = try await Self.cost(issuer) {
                    let reply = try await AuthorizationChallengeTests.redeem(issuer, code: code, verifier: pkce.verifier)
                    #expect(reply.status == 200, "\(reply.text)")
                }
                return [start, verify, token]
            }
            let (start, verify, token) = (costs[0], costs[1], costs[2])
            print("Statements per first-party sign-in (\(engine)): challenge \(start), assertion \(verify), token \(token)")
            #expect(start == Cost(statements: 1, transactions: 1), "challenge: \(start)")
            #expect(verify == Self.assertionBudget(engine), "assertion: \(verify)")
            #expect(token == Self.tokenBudget(engine), "token: \(token)")
        }
    }
}
