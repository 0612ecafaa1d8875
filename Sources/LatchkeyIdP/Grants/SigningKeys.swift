import Foundation
import LatchkeyCrypto
import Synchronization

/// The provider's ID-token signing keys, kept sealed in the store so every instance
/// signs with the same keys and publishes the same JWKS (docs/ARCHITECTURE.md, "Signing
/// keys").
///
/// Rotation: a new key is published at once but signs only from `signs_from`, a
/// publication delay later, so relying parties that cache the JWKS learn it before they
/// meet a token it signed; the key it replaces stays published until the last token it
/// signed has expired (`published_until` = the new key's start plus the token lifetime).
/// Instances reload the list at most every ``reloadInterval``, well within the delay.
final class SigningKeys: Sendable {
    struct Entry: Sendable {
        var kid: String
        var key: SigningKey
        var jwk: JSONWebKey
        var signsFrom: Date
        var publishedUntil: Date?
    }

    private let database: any ProviderDatabase
    private let sealing: StoreSealing
    private let configuration: ProviderConfiguration
    private let cache = Mutex<(entries: [Entry], loadedAt: Date)>(([], .distantPast))
    static let reloadInterval: TimeInterval = 60

    init(database: any ProviderDatabase, sealing: StoreSealing, configuration: ProviderConfiguration) {
        self.database = database
        self.sealing = sealing
        self.configuration = configuration
    }

    /// Reads the keys from the store, making the first one when there is none.
    func reload(now: Date = ProviderClock.now) async throws {
        let fresh = try SigningKey.generate(.es256)
        let kid = try fresh.publicKey.jwk.thumbprint()
        let sealed = try fresh.withPKCS8DER { try sealing.seal(Data($0), name: "signing key \(kid)") }
        let rows = try await database.transaction { transaction -> [SQLRow] in
            let rows = try await transaction.query("SELECT kid, sealed_private_key, signs_from, published_until FROM signing_keys")
            guard rows.isEmpty else { return rows }
            try await transaction.execute("""
                INSERT INTO signing_keys (kid, algorithm, sealed_private_key, created_at, signs_from) VALUES (\(kid), 'ES256', \(sealed), \(now), \(now))
                """)
            return try await transaction.query("SELECT kid, sealed_private_key, signs_from, published_until FROM signing_keys")
        }
        let known = cache.withLock { Dictionary($0.entries.map { ($0.kid, $0) }, uniquingKeysWith: { first, _ in first }) }
        var entries: [Entry] = []
        for row in rows {
            let kid = try row.decode("kid", as: String.self)
            if var entry = known[kid] {
                // Parsing PKCS#8 costs about 0.7 ms: a key already loaded is kept.
                entry.signsFrom = try row.decode("signs_from", as: Date.self)
                entry.publishedUntil = try row.decode("published_until", as: Date?.self)
                entries.append(entry)
                continue
            }
            let der = try sealing.open(try row.decode("sealed_private_key", as: Data.self), name: "signing key \(kid)")
            let key = try SigningKey(pkcs8DER: der)
            entries.append(Entry(kid: kid, key: key, jwk: try key.publicKey.jwk, signsFrom: try row.decode("signs_from", as: Date.self), publishedUntil: try row.decode("published_until", as: Date?.self)))
        }
        cache.withLock { $0 = (entries, now) }
    }

    private func entries(now: Date) async throws -> [Entry] {
        let (entries, loadedAt) = cache.withLock { $0 }
        if now.timeIntervalSince(loadedAt) < Self.reloadInterval, !entries.isEmpty { return entries }
        try await reload(now: now)
        return cache.withLock { $0.entries }
    }

    /// The key that signs now: the newest whose start has come, among those published.
    func current(now: Date = ProviderClock.now) async throws -> Entry {
        let live = try await entries(now: now).filter { $0.signsFrom <= now && ($0.publishedUntil ?? .distantFuture) > now }
        guard let entry = live.max(by: { $0.signsFrom < $1.signsFrom }) else {
            throw StoreError.keyUnavailable("no signing key is active now")
        }
        return entry
    }

    /// Every key a relying party should accept or expect: the signing one, those about
    /// to sign, and those whose tokens may still be live.
    func published(now: Date = ProviderClock.now) async throws -> [Entry] {
        try await entries(now: now).filter { ($0.publishedUntil ?? .distantFuture) > now }.sorted { $0.signsFrom < $1.signsFrom }
    }

    /// Starts a rotation: a new key, published now, signing after the publication delay;
    /// the keys it replaces stay published until their last token has expired.
    func rotate(now: Date = ProviderClock.now) async throws -> (kid: String, signsFrom: Date) {
        let key = try SigningKey.generate(.es256)
        let kid = try key.publicKey.jwk.thumbprint()
        let sealed = try key.withPKCS8DER { try sealing.seal(Data($0), name: "signing key \(kid)") }
        let signsFrom = now.addingTimeInterval(configuration.signingKeyPublicationDelay)
        let retireAt = signsFrom.addingTimeInterval(configuration.accessTokenLifetime + 60)
        try await database.transaction { transaction in
            try await transaction.execute("""
                UPDATE signing_keys SET published_until = \(retireAt) WHERE published_until IS NULL OR published_until > \(retireAt)
                """)
            try await transaction.execute("""
                INSERT INTO signing_keys (kid, algorithm, sealed_private_key, created_at, signs_from) VALUES (\(kid), 'ES256', \(sealed), \(now), \(signsFrom))
                """)
            // Keys no longer published are of no use to anyone: forget them.
            try await transaction.execute("DELETE FROM signing_keys WHERE published_until IS NOT NULL AND published_until <= \(now)")
        }
        try await reload(now: now)
        return (kid, signsFrom)
    }
}
