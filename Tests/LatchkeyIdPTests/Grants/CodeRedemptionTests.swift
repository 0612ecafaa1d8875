import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
@testable import LatchkeyIdP
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Synchronization
import Testing

/// An authorization code's redemption (RFC 6749 §4.1.3, RFC 7636 §4.6) on both engines.
/// On PostgreSQL a code is a sealed ``CodeTicket`` and redeemed by one statement with no
/// read before it (`GrantLedger.redeemInOneStatement`); every refusal must then come out
/// as the transaction's would, with its reason, and leave the code as the transaction
/// would: usable after a wrong verifier, redirect URI or client, spent and its family
/// revoked after a replay.
@Suite("Provider store: an authorization code's redemption")
struct CodeRedemptionTests {
    static let redirectURI = "https://app.example/cb"
    /// A public client, as configured (no registration stamp).
    static let client = RegisteredClient(configured: .init(id: "client", redirectURIs: [redirectURI]))

    /// A provider with one identity and credential; `body` gets a function that signs in
    /// (a fresh session each time, with a nonce and the client's registration stamp) and
    /// returns the code and its PKCE pair.
    static func withSignIns(
        _ engine: TestStore,
        _ body: (Provider, String, @escaping (String?, String?) async throws -> (code: String, pkce: PKCE)) async throws -> Void
    ) async throws {
        try await engine.withProvider { provider in
            let database = provider.context.database
            let record = RelyingParty.RegisteredCredential(
                id: try SecureRandom.bytes(count: 32), publicKey: try COSEKey(SigningKey.generate(.es256).publicKey), signCount: 0,
                backupEligible: false, backupState: false, userVerified: true, attestationFormat: "none", aaguid: Data(count: 16), transports: []
            )
            let identity = try await database.transaction { transaction in
                let identity = try await provider.identities.create(username: "ada", email: nil, displayName: nil, in: transaction)
                try await provider.credentials.register(record, identityID: identity.id, in: transaction)
                return identity
            }
            let counter = Counter()
            try await body(provider, identity.id) { nonce, registration in
                let credential = try #require(try await database.read { try await provider.credentials.credential(record.id, in: $0) })
                let pkce = try PKCE.generate()
                let signIn = GrantLedger.VerifiedSignIn(
                    sessionID: try ProviderContext.randomToken(), sessionExpiresAt: Date().addingTimeInterval(300), credential: credential,
                    signCount: counter.next(), clientID: client.id, clientRegistration: registration, scope: "openid", redirectURI: redirectURI, codeChallenge: pkce.challenge,
                    nonce: nonce, dpopJKT: nil
                )
                let code = try await provider.grants.complete(
                    signIn, credentials: provider.credentials, tickets: try provider.context.tickets, spentError: .notFound("spent"), now: Date(),
                    in: database
                )
                return (code, pkce)
            }
        }
    }

    /// The sign-ins' counters, each above the one before.
    final class Counter: Sendable {
        private let value = Mutex<UInt32>(0)
        func next() -> UInt32 { value.withLock { $0 += 1; return $0 } }
    }

    static func exchange(_ code: String, verifier: String?, redirectURI: String? = redirectURI) -> TokenRequest {
        TokenRequest(grantType: .authorizationCode, code: code, redirectURI: redirectURI, codeVerifier: verifier, clientID: client.id)
    }

    static func refusal(_ body: () async throws -> Data) async -> ProviderError? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error as? ProviderError
        }
    }

    static func statements(_ provider: Provider, _ body: () async throws -> Void) async throws -> Int {
        let before = provider.context.database.statistics.statements
        try await body()
        return provider.context.database.statistics.statements - before
    }

    static func idTokenClaims(_ answer: Data) throws -> JSONValue {
        let idToken = try #require(try JSONValue(json: answer)["id_token"]?.stringValue)
        let parts = idToken.split(separator: ".")
        try #require(parts.count == 3)
        return try JSONValue(json: try Base64URL.decode(String(parts[1])))
    }

    @Test("a code is sealed on PostgreSQL and redeemed in one statement; on SQLite it is random", arguments: TestStore.available)
    func sealedOnPostgres(engine: TestStore) async throws {
        try await Self.withSignIns(engine) { provider, identityID, signIn in
            let (code, pkce) = try await signIn("n-1", nil)
            let ticket = try provider.context.tickets.open(CodeTicket.self, from: code)
            if engine == .postgres {
                #expect(ticket == CodeTicket(identityID: identityID, scope: "openid"))
                #expect(code.utf8.count <= GrantLedger.maximumCodeLength)
            } else {
                #expect(ticket == nil)
                #expect(code.utf8.count == 43)
            }
            var answer = Data()
            let statements = try await Self.statements(provider) {
                answer = try await provider.tokens.token(Self.exchange(code, verifier: pkce.verifier), client: Self.client)
            }
            #expect(statements == (engine == .postgres ? 1 : 5))
            let claims = try Self.idTokenClaims(answer)
            #expect(claims["sub"]?.stringValue == identityID)
            #expect(claims["nonce"]?.stringValue == "n-1")
            #expect(claims["auth_time"] != nil)
            // The event the statement wrote names the identity and the scope.
            let event = try await provider.context.database.read { transaction in
                try await transaction.first("SELECT subject, details FROM audit_pending WHERE event_type = 'token.issued'")
            }
            #expect(try event?.decode("subject", as: String?.self) == identityID)
            #expect(try event?.decode("details", as: String?.self)?.contains("\"scope\":\"openid\"") == true)
        }
    }

    @Test(
        "a wrong verifier, redirect URI or client, or an altered code, is refused with its reason and leaves the code usable",
        arguments: TestStore.available
    )
    func refusalsKeepTheCode(engine: TestStore) async throws {
        try await Self.withSignIns(engine) { provider, _, signIn in
            let (code, pkce) = try await signIn(nil, nil)
            let wrongVerifier = await Self.refusal {
                try await provider.tokens.token(Self.exchange(code, verifier: try PKCE.generate().verifier), client: Self.client)
            }
            #expect(wrongVerifier?.reason == "PKCE verification failed")
            let noVerifier = await Self.refusal { try await provider.tokens.token(Self.exchange(code, verifier: nil), client: Self.client) }
            #expect(noVerifier?.reason == "PKCE verification failed")
            let notAVerifier = await Self.refusal { try await provider.tokens.token(Self.exchange(code, verifier: "short"), client: Self.client) }
            #expect(notAVerifier?.reason == "PKCE verification failed")
            let wrongRedirect = await Self.refusal {
                try await provider.tokens.token(Self.exchange(code, verifier: pkce.verifier, redirectURI: "https://app.example/other"), client: Self.client)
            }
            #expect(wrongRedirect?.reason == "redirect_uri differs from the authorization request")
            let noRedirect = await Self.refusal {
                try await provider.tokens.token(Self.exchange(code, verifier: pkce.verifier, redirectURI: nil), client: Self.client)
            }
            #expect(noRedirect?.reason == "redirect_uri differs from the authorization request")
            var other = Self.client
            other.id = "other"
            let otherClient = await Self.refusal { try await provider.tokens.token(Self.exchange(code, verifier: pkce.verifier), client: other) }
            #expect(otherClient?.reason == "unknown authorization code")
            // The client deleted and registered again under its id since the sign-in began:
            // the code is not the new registration's.
            let (stamped, stampedPKCE) = try await signIn(nil, "first registration")
            var reregistered = Self.client
            reregistered.registration = "second registration"
            let registration = await Self.refusal {
                try await provider.tokens.token(Self.exchange(stamped, verifier: stampedPKCE.verifier), client: reregistered)
            }
            #expect(registration?.reason == "unknown authorization code")
            reregistered.registration = "first registration"
            _ = try await provider.tokens.token(Self.exchange(stamped, verifier: stampedPKCE.verifier), client: reregistered)
            // After every refusal above, the code still redeems.
            _ = try await provider.tokens.token(Self.exchange(code, verifier: pkce.verifier), client: Self.client)
            let (second, secondPKCE) = try await signIn(nil, nil)
            // One character changed in the middle: another SHA-256, and on PostgreSQL a seal that does not open.
            var altered = Array(second)
            let middle = altered.count / 2
            altered[middle] = altered[middle] == "A" ? "B" : "A"
            let alteredRefusal = await Self.refusal {
                try await provider.tokens.token(Self.exchange(String(altered), verifier: secondPKCE.verifier), client: Self.client)
            }
            #expect(alteredRefusal?.reason == "unknown authorization code")
            let tooLong = await Self.refusal {
                try await provider.tokens.token(
                    Self.exchange(second + String(repeating: "A", count: GrantLedger.maximumCodeLength), verifier: secondPKCE.verifier), client: Self.client
                )
            }
            #expect(tooLong?.reason == "unknown authorization code")
            let answer = try await provider.tokens.token(Self.exchange(second, verifier: secondPKCE.verifier), client: Self.client)
            #expect(try JSONValue(json: answer)["access_token"]?.stringValue != nil)
        }
    }

    @Test("a replayed code is refused and revokes its family; an expired code and one of a revoked family are refused", arguments: TestStore.available)
    func replayExpiryRevocation(engine: TestStore) async throws {
        try await Self.withSignIns(engine) { provider, _, signIn in
            let (code, pkce) = try await signIn(nil, nil)
            let answer = try await provider.tokens.token(Self.exchange(code, verifier: pkce.verifier), client: Self.client)
            let refresh = try #require(try JSONValue(json: answer)["refresh_token"]?.stringValue)
            let replay = await Self.refusal { try await provider.tokens.token(Self.exchange(code, verifier: pkce.verifier), client: Self.client) }
            #expect(replay?.reason == GrantLedger.replayedCode.reason)
            // RFC 6749 §4.1.2: what the code issued is revoked.
            let refreshed = await Self.refusal {
                try await provider.tokens.token(TokenRequest(grantType: .refreshToken, refreshToken: refresh, clientID: Self.client.id), client: Self.client)
            }
            #expect(refreshed?.code == .invalidGrant)

            let (late, latePKCE) = try await signIn(nil, nil)
            let expired = await Self.refusal {
                try await provider.tokens.token(
                    Self.exchange(late, verifier: latePKCE.verifier), client: Self.client,
                    now: Date().addingTimeInterval(provider.context.configuration.authorizationCodeLifetime + 5)
                )
            }
            #expect(expired?.reason == "authorization code expired")

            let (revokedCode, revokedPKCE) = try await signIn(nil, nil)
            try await provider.context.database.transaction { transaction in
                let family = try #require(try await transaction.first("""
                    SELECT family_id FROM authorization_codes WHERE code_hash = \(try ProviderContext.hash(revokedCode))
                    """)?.decode("family_id", as: String.self))
                try await provider.grants.revokeFamily(family, now: Date(), in: transaction)
            }
            let revoked = await Self.refusal {
                try await provider.tokens.token(Self.exchange(revokedCode, verifier: revokedPKCE.verifier), client: Self.client)
            }
            #expect(revoked?.reason == "this grant was revoked")
        }
    }

    @Test("the refresh token ends with its family when the family ends first; the grants per client are capped", arguments: TestStore.available)
    func familyLimits(engine: TestStore) async throws {
        try await Self.withSignIns(engine) { provider, identityID, signIn in
            let configuration = provider.context.configuration
            // A code issued now and redeemed a moment before the family's absolute end,
            // which comes before the refresh token's idle lifetime.
            let (code, pkce) = try await signIn(nil, nil)
            let familyEnd = try #require(try await provider.context.database.read { transaction in
                try await transaction.first("""
                    SELECT f.expires_at FROM authorization_codes c JOIN grant_families f ON f.id = c.family_id
                    WHERE c.code_hash = \(try ProviderContext.hash(code))
                    """)?.decode("expires_at", as: Date.self)
            })
            try await provider.context.database.transaction { transaction in
                try await transaction.execute("UPDATE authorization_codes SET expires_at = \(familyEnd) WHERE code_hash = \(try ProviderContext.hash(code))")
            }
            let now = familyEnd.addingTimeInterval(-1)
            #expect(now.addingTimeInterval(configuration.refreshTokenIdleLifetime) > familyEnd)
            let answer = try await provider.tokens.token(Self.exchange(code, verifier: pkce.verifier), client: Self.client, now: now)
            let refresh = try #require(try JSONValue(json: answer)["refresh_token"]?.stringValue)
            let access = try #require(try JSONValue(json: answer)["access_token"]?.stringValue)
            let expiries = try await provider.context.database.read { transaction in
                (
                    try await transaction.first("SELECT expires_at FROM tokens WHERE hash = \(try ProviderContext.hash(refresh))")?.decode("expires_at", as: Date.self),
                    try await transaction.first("SELECT expires_at FROM tokens WHERE hash = \(try ProviderContext.hash(access))")?.decode("expires_at", as: Date.self)
                )
            }
            #expect(expiries.0.map { abs($0.timeIntervalSince(familyEnd)) < 0.002 } == true, "refresh: \(String(describing: expiries.0)) family: \(familyEnd)")
            #expect(expiries.1.map { abs($0.timeIntervalSince(now.addingTimeInterval(configuration.accessTokenLifetime))) < 0.002 } == true)

            // More sign-ins than the cap: the oldest live families are revoked.
            for _ in 0..<(configuration.maximumGrantsPerClient + 1) {
                let (code, pkce) = try await signIn(nil, nil)
                _ = try await provider.tokens.token(Self.exchange(code, verifier: pkce.verifier), client: Self.client)
            }
            let live = try await provider.context.database.read { transaction in
                try await transaction.first("""
                    SELECT count(*) AS live FROM grant_families
                    WHERE identity_id = \(identityID) AND client_id = \(Self.client.id) AND revoked_at IS NULL AND expires_at > \(Date())
                    """)?.decode("live", as: Int64.self)
            }
            #expect(live == Int64(configuration.maximumGrantsPerClient))
        }
    }
}
