import Foundation
import LatchkeyCrypto
import LatchkeyWebAuthn
import Logging

/// Bulk-loads synthetic identities, each with one credential, straight into a store: how
/// the benchmark gives the provider 10,000 to 1,000,000 users in seconds rather than
/// hours of admin-API calls (docs/PERFORMANCE.md). `serve` never calls it.
public enum ProviderSeeding {
    /// Adds `count` identities named `<prefix><n>` (with one ES256 credential each, whose
    /// private key nobody holds) to the store `configuration` names, in transactions of
    /// `rowsPerTransaction`, and returns how long it took.
    @discardableResult
    public static func seedIdentities(_ count: Int, prefix: String = "seed-", configuration: ProviderConfiguration, rowsPerTransaction: Int = 10_000) async throws -> Duration {
        let start = ContinuousClock.now
        let store = try await ProviderStore.open(configuration, logger: configuration.logger)
        do {
            try await insert(count, prefix: prefix, into: store.database, rowsPerTransaction: rowsPerTransaction)
        } catch {
            await store.database.close()
            throw error
        }
        await store.database.close()
        return ContinuousClock.now - start
    }

    private static func insert(_ count: Int, prefix: String, into database: any ProviderDatabase, rowsPerTransaction: Int) async throws {
        try await Migrations.run(on: database)
        let publicKey = try COSEKey(SigningKey.generate(.es256).publicKey).encoded
        let now = ProviderClock.now
        let rowsPerStatement = 500
        var next = 0
        while next < count {
            let end = min(next + rowsPerTransaction, count)
            let range = next..<end
            var identities: [(id: String, name: String)] = []
            identities.reserveCapacity(range.count)
            for index in range { identities.append((UUID().uuidString.lowercased(), "\(prefix)\(index)")) }
            var credentialIDs: [Data] = []
            for _ in range { credentialIDs.append(try SecureRandom.bytes(count: 32)) }
            let batch = (identities, credentialIDs)
            try await database.transaction { transaction in
                for offset in stride(from: 0, to: batch.0.count, by: rowsPerStatement) {
                    let rows = offset..<min(offset + rowsPerStatement, batch.0.count)
                    var insertIdentities = SQLStatement.Interpolation(literalCapacity: rows.count * 40, interpolationCount: rows.count * 7)
                    insertIdentities.appendLiteral("INSERT INTO identities (id, username, username_key, username_skeleton, email, display_name, created_at) VALUES ")
                    var insertCredentials = SQLStatement.Interpolation(literalCapacity: rows.count * 40, interpolationCount: rows.count * 6)
                    insertCredentials.appendLiteral("""
                        INSERT INTO credentials (id, identity_id, public_key, sign_count, backup_eligible, backup_state, user_verified,
                            attestation_format, aaguid, transports, created_at) VALUES 
                        """)
                    for row in rows {
                        let (id, name) = batch.0[row]
                        let separator = row == rows.lowerBound ? "" : ", "
                        insertIdentities.appendLiteral(separator + "(")
                        insertIdentities.appendInterpolation(id)
                        insertIdentities.appendLiteral(", ")
                        insertIdentities.appendInterpolation(name)
                        insertIdentities.appendLiteral(", ")
                        insertIdentities.appendInterpolation(Username.key(name))
                        insertIdentities.appendLiteral(", ")
                        insertIdentities.appendInterpolation(Username.skeleton(name))
                        insertIdentities.appendLiteral(", ")
                        insertIdentities.appendInterpolation(name + "@example.com")
                        insertIdentities.appendLiteral(", ")
                        insertIdentities.appendInterpolation(name)
                        insertIdentities.appendLiteral(", ")
                        insertIdentities.appendInterpolation(now)
                        insertIdentities.appendLiteral(")")
                        insertCredentials.appendLiteral(separator + "(")
                        insertCredentials.appendInterpolation(batch.1[row])
                        insertCredentials.appendLiteral(", ")
                        insertCredentials.appendInterpolation(id)
                        insertCredentials.appendLiteral(", ")
                        insertCredentials.appendInterpolation(publicKey)
                        insertCredentials.appendLiteral(", 0, 0, 0, 1, 'none', ")
                        insertCredentials.appendInterpolation(Data(count: 16))
                        insertCredentials.appendLiteral(", '', ")
                        insertCredentials.appendInterpolation(now)
                        insertCredentials.appendLiteral(")")
                    }
                    try await transaction.execute(SQLStatement(stringInterpolation: insertIdentities))
                    try await transaction.execute(SQLStatement(stringInterpolation: insertCredentials))
                }
            }
            next = end
        }
    }
}
