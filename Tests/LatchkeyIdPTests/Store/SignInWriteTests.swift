import Foundation
import LatchkeyCrypto
import LatchkeyProtocol
@testable import LatchkeyIdP
import LatchkeyTestSupport
import LatchkeyWebAuthn
import Testing

/// The write that completes a verified assertion (`GrantLedger.complete`), on both
/// engines: one statement of data-modifying CTEs on PostgreSQL, four statements of a
/// transaction on SQLite. Each refusal must write no grant, whatever the engine, since a
/// race between an assertion's check and its write is hard to provoke over HTTP.
@Suite("Provider store: the sign-in's write")
struct SignInWriteTests {
    static func signIn(_ session: String, _ credential: StoredCredential, signCount: UInt32, now: Date) -> GrantLedger.VerifiedSignIn {
        GrantLedger.VerifiedSignIn(
            sessionID: session, sessionExpiresAt: now.addingTimeInterval(300), credential: credential, signCount: signCount,
            clientID: "client", scope: "openid", redirectURI: "https://app.example/cb", codeChallenge: "challenge", nonce: nil, dpopJKT: nil
        )
    }

    static func count(_ table: String, _ provider: Provider) async throws -> Int64 {
        try await provider.context.database.read { transaction in
            try await transaction.first("SELECT count(*) AS rows FROM \(raw: table)")?.decode("rows", as: Int64.self) ?? -1
        }
    }

    static func refusal(_ body: () async throws -> Void) async -> ProviderError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? ProviderError
        }
    }

    @Test("a sign-in is written once; a spent session, a counter that moved and a revoked credential are refused and write no grant", arguments: TestStore.available)
    func refusals(engine: TestStore) async throws {
        try await engine.withProvider { provider in
            let database = provider.context.database
            let now = Date()
            let record = RelyingParty.RegisteredCredential(
                id: try SecureRandom.bytes(count: 32), publicKey: try COSEKey(SigningKey.generate(.es256).publicKey), signCount: 4,
                backupEligible: false, backupState: false, userVerified: true, attestationFormat: "none", aaguid: Data(count: 16), transports: []
            )
            try await database.transaction { transaction in
                let identity = try await provider.identities.create(username: "ada", email: nil, displayName: nil, in: transaction)
                try await provider.credentials.register(record, identityID: identity.id, in: transaction)
            }
            let read = { () async throws -> StoredCredential in
                try #require(try await database.read { try await provider.credentials.credential(record.id, in: $0) })
            }
            let spent = ProviderError.notFound("spent")
            let stale = try await read()

            let code = try await provider.grants.complete(Self.signIn("s1", stale, signCount: 5, now: now), credentials: provider.credentials, tickets: try provider.context.tickets, spentError: spent, now: now, in: database)
            #expect(try await read().record.signCount == 5)
            let stored = try await database.read { transaction in
                try await transaction.first("SELECT redirect_uri, nonce FROM authorization_codes WHERE code_hash = \(try ProviderContext.hash(code))")
            }
            #expect(try stored?.decode("redirect_uri", as: String.self) == "https://app.example/cb")
            #expect(try stored?.decode("nonce", as: String?.self) == nil)

            // The same session again, even with a fresh counter: spent.
            let replay = await Self.refusal {
                _ = try await provider.grants.complete(Self.signIn("s1", try await read(), signCount: 6, now: now), credentials: provider.credentials, tickets: try provider.context.tickets, spentError: spent, now: now, in: database)
            }
            #expect(replay?.reason == "spent")
            // A new session whose assertion was checked against the old counter (4): another
            // sign-in wrote 5 meanwhile.
            let moved = await Self.refusal {
                _ = try await provider.grants.complete(Self.signIn("s2", stale, signCount: 5, now: now), credentials: provider.credentials, tickets: try provider.context.tickets, spentError: spent, now: now, in: database)
            }
            #expect(moved?.code == .invalidAssertion)
            // Revoked between the check and the write.
            let current = try await read()
            _ = try await database.transaction { try await provider.credentials.revoke(record.id, now: now, in: $0) }
            let revoked = await Self.refusal {
                _ = try await provider.grants.complete(Self.signIn("s3", current, signCount: 6, now: now), credentials: provider.credentials, tickets: try provider.context.tickets, spentError: spent, now: now, in: database)
            }
            #expect(revoked?.code == .invalidAssertion)
            #expect(try await Self.count("grant_families", provider) == 1)
            #expect(try await Self.count("authorization_codes", provider) == 1)
            #expect(try await read().record.signCount == 5)
        }
    }
}
