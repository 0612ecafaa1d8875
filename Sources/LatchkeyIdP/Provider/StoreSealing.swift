import Foundation
import LatchkeyCrypto

/// Seals the store's secrets (signing keys, the login-hint decoy key) with AES-256-GCM
/// under the store key, with the secret's name as associated data, so a copy of the
/// database, a backup or a PostgreSQL dump holds no usable key, and a sealed value moved
/// to another name does not open (docs/SECURITY.md, "The provider's store").
///
/// The store key comes from `serve --store-key-file`, the systemd credential
/// `latchkey-store-key`, or, for SQLite, `store.key` beside the database; never argv.
/// Every instance of one PostgreSQL store needs the same key.
struct StoreSealing: Sendable {
    let key: SymmetricKey

    func seal(_ plaintext: Data, name: String) throws -> Data {
        try AESGCM.seal(plaintext, using: key, authenticating: Data("latchkey store: \(name)".utf8)).combined
    }

    func open(_ sealed: Data, name: String) throws -> Data {
        do {
            return try AESGCM.open(AESGCM.SealedBox(combined: sealed), using: key, authenticating: Data("latchkey store: \(name)".utf8))
        } catch {
            throw StoreError.keyUnavailable("the store's \(name) does not open with this store key; every instance needs the key the store was made with", underlying: error)
        }
    }

    /// The 32-byte secret `name`, made and stored sealed on first use.
    func secret(named name: String, in database: any ProviderDatabase) async throws -> SymmetricKey {
        SymmetricKey(data: try await value(named: name, in: database) { try SecureRandom.bytes(count: 32) })
    }

    /// The ES256 signing key `name` (its PKCS#8), made and stored sealed on first use.
    func signingKey(named name: String, in database: any ProviderDatabase) async throws -> SigningKey {
        let der = try await value(named: name, in: database) { try SigningKey.generate(.es256).withPKCS8DER { Data($0) } }
        return try SigningKey(pkcs8DER: der)
    }

    /// The stored secret `name`, if there is one; nothing is made (an offline check).
    func existingValue(named name: String, in database: any ProviderDatabase) async throws -> Data? {
        guard let row = try await database.read({ try await $0.first("SELECT sealed_value FROM provider_secrets WHERE name = \(name)") }) else {
            return nil
        }
        return try open(try row.decode("sealed_value", as: Data.self), name: name)
    }

    private func value(named name: String, in database: any ProviderDatabase, make: () throws -> Data) async throws -> Data {
        let fresh = try seal(try make(), name: name)
        let sealed = try await database.transaction { transaction -> Data in
            if let row = try await transaction.first("SELECT sealed_value FROM provider_secrets WHERE name = \(name)") {
                return try row.decode("sealed_value", as: Data.self)
            }
            try await transaction.execute("INSERT INTO provider_secrets (name, sealed_value) VALUES (\(name), \(fresh))")
            return fresh
        }
        return try open(sealed, name: name)
    }
}
