import Foundation
import LatchkeyCrypto
import Logging
import LatchkeyWebAuthn

/// Milestone 1 kept identities and credentials in `state.json` and the signing key in
/// `signing-key.pem`. The first start on such a directory imports both into the new
/// database, in one transaction, then renames `state.json` to `state.json.imported` (so
/// the import happens once and nothing is lost if it fails half-way) and removes the
/// key file, whose key is now sealed in the store.
enum LegacySnapshotImport {
    private struct Snapshot: Decodable {
        struct IdentityRecord: Decodable {
            var id: String
            var username: String
            var email: String?
            var displayName: String
        }

        var format: Int
        var identities: [IdentityRecord]
        var credentials: [CredentialRecordJSON]
    }

    static func run(from directory: URL, into database: any ProviderDatabase, sealing: StoreSealing, logger: Logger) async throws {
        let stateURL = directory.appendingPathComponent(StoreFiles.legacyStateName)
        guard FileManager.default.fileExists(atPath: stateURL.path) else { return }
        let snapshot: Snapshot
        do {
            snapshot = try JSONDecoder().decode(Snapshot.self, from: Data(contentsOf: stateURL))
        } catch {
            throw StoreError.corruptRow("\(stateURL.path) (the state file of a version before the database) does not parse; move it away to start without it", underlying: error)
        }
        guard snapshot.format == 1 else {
            throw StoreError.schemaTooNew("\(stateURL.path) has an unknown format \(snapshot.format)")
        }
        let keyPath = directory.appendingPathComponent(StoreFiles.legacySigningKeyName).path
        let legacyKey = try FileManager.default.fileExists(atPath: keyPath) ? SigningKey(pemRepresentation: String(contentsOfFile: keyPath, encoding: .utf8)) : nil
        let credentials = try snapshot.credentials.map { ($0.identityID, try $0.registered(), $0.revoked) }
        let now = ProviderClock.now
        try await database.transaction { transaction in
            for identity in snapshot.identities {
                try await transaction.execute("""
                    INSERT INTO identities (id, username, username_key, username_skeleton, email, display_name, created_at)
                    VALUES (\(identity.id), \(identity.username), \(Username.key(identity.username)), \(Username.skeleton(identity.username)),
                        \(identity.email), \(identity.displayName), \(now))
                    ON CONFLICT DO NOTHING
                    """)
            }
            for (identityID, record, revoked) in credentials {
                try await transaction.execute("""
                    INSERT INTO credentials (id, identity_id, public_key, sign_count, backup_eligible, backup_state, user_verified,
                        attestation_format, aaguid, transports, revoked_at, created_at)
                    VALUES (\(record.id), \(identityID), \(record.publicKey.encoded), \(record.signCount), \(record.backupEligible),
                        \(record.backupState), \(record.userVerified), \(record.attestationFormat), \(record.aaguid),
                        \(record.transports.joined(separator: ",")), \(revoked ? now : nil), \(now))
                    ON CONFLICT DO NOTHING
                    """)
            }
            if let legacyKey, try await transaction.first("SELECT 1 FROM signing_keys") == nil {
                let kid = try legacyKey.publicKey.jwk.thumbprint()
                let sealed = try legacyKey.withPKCS8DER { try sealing.seal(Data($0), name: "signing key \(kid)") }
                try await transaction.execute("""
                    INSERT INTO signing_keys (kid, algorithm, sealed_private_key, created_at, signs_from) VALUES (\(kid), 'ES256', \(sealed), \(now), 0)
                    """)
            }
        }
        let imported = directory.appendingPathComponent(StoreFiles.legacyStateName + ".imported")
        guard rename(stateURL.path, imported.path) == 0 else {
            throw StoreError.engineFailure("imported \(stateURL.path) but cannot rename it: \(String(cString: strerror(errno)))")
        }
        // The old key file held the signing key in clear; it is sealed in the store now.
        if legacyKey != nil { unlink(keyPath) }
        logger.notice("imported the state file of an earlier version", metadata: ["identity_count": .stringConvertible(snapshot.identities.count), "credential_count": .stringConvertible(credentials.count)])
    }
}
