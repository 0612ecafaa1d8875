import Foundation
public import LatchkeyProtocol
import LatchkeyCrypto
import Logging

/// `latchkey admin events verify --data-dir DIR` or `--database URL`: the audit log
/// checked on the store itself, with no provider running (docs/PROTOCOL.md, "Audit log").
/// It needs the store key, as the provider does: the rows' authentication key and the
/// checkpoints' signing key are sealed with it. It writes nothing: waiting events are
/// left for the provider to seal, and a store without an audit log says so.
public enum AuditLogVerification {
    public static func verify(configuration: ProviderConfiguration, expecting expected: AuditHeadMark? = nil) async throws -> AdminAPI.EventVerification {
        var logger = Logger(label: "latchkey.audit")
        logger.logLevel = .error
        if case .sqlite(let directory) = configuration.storage {
            guard FileManager.default.fileExists(atPath: directory.appendingPathComponent(StoreFiles.databaseName).path) else {
                throw StoreError.unavailable("no Latchkey store in \(directory.path)")
            }
        }
        // Read only: verifying never creates, migrates or changes a file (not even a
        // store key where the operator keeps it elsewhere).
        let opened = try await ProviderStore.open(configuration, readOnly: true, logger: logger)
        do {
            let result = try await verify(opened, expecting: expected)
            await opened.database.close()
            return result
        } catch {
            await opened.database.close()
            throw error
        }
    }

    private static func verify(_ opened: ProviderStore.Opened, expecting expected: AuditHeadMark?) async throws -> AdminAPI.EventVerification {
        let version = try await opened.database.read { transaction in
            try await transaction.first("SELECT version FROM latchkey_schema")?.decode("version", as: Int64.self)
        } ?? 0
        guard version >= AuditChain.schemaVersion else {
            throw StoreError.unavailable("this store has no audit log yet (schema version \(version)): start a provider of this version on it first")
        }
        let sealing = StoreSealing(key: opened.storeKey)
        let audit = AuditLog(enabled: true)
        guard let macKey = try await sealing.existingValue(named: AuditChain.macKeyName, in: opened.database),
              let signingKey = try await sealing.existingValue(named: AuditChain.signingKeyName, in: opened.database)
        else {
            // No keys: a store whose log never wrote anything, or one whose keys were taken
            // away so that edited events could not be checked. A store holding any part of
            // a log is never intact without the keys that vouch for it.
            let held = try await opened.database.read { transaction in
                for table in ["audit_events", "audit_pending", "audit_head", "audit_checkpoints"] {
                    if try await transaction.first(SQLStatement(stringLiteral: "SELECT 1 FROM \(table) LIMIT 1")) != nil { return true }
                }
                return false
            }
            guard !held, expected.map({ $0.id == 0 }) ?? true else {
                return AdminAPI.EventVerification(
                    intact: false, checked: 0, anchor: 0, newest: 0, firstBroken: 1,
                    problem: held ? "the store holds an audit log but not its keys (audit-mac, audit-signing-key): nothing in it can be vouched for"
                        : "the store holds no audit log, but the head kept outside it names event \(expected?.id ?? 0): the log was emptied", checkpoints: 0
                )
            }
            return AdminAPI.EventVerification(intact: true, checked: 0, anchor: 0, newest: 0, checkpoints: 0)
        }
        audit.load(key: SymmetricKey(data: macKey))
        let key = try SigningKey(pkcs8DER: signingKey).publicKey
        return try await AuditVerifier(database: opened.database, audit: audit, key: key).verify(expecting: expected)
    }
}
