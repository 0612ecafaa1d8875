import Foundation
import LatchkeyCrypto
import Logging

/// Opens the store a configuration names, with the key that seals its secrets.
enum ProviderStore {
    struct Opened {
        var database: any ProviderDatabase
        var storeKey: SymmetricKey
    }

    ///
    /// `readOnly` opens a SQLite store to read it (`admin events verify --data-dir`):
    /// nothing is created, migrated or imported, and a missing `store.key` is an error,
    /// never made.
    static func open(_ configuration: ProviderConfiguration, readOnly: Bool = false, logger: Logger) async throws -> Opened {
        switch configuration.storage {
        case .memory:
            let database = try await SQLiteProviderDatabase.open(directory: nil, logger: logger)
            let key = try configuration.storeKey ?? SecureRandom.bytes(count: 32)
            return Opened(database: database, storeKey: try storeKey(key))
        case .sqlite(let directory):
            let database = try await SQLiteProviderDatabase.open(directory: directory, readOnly: readOnly, logger: logger)
            do {
                let key = try configuration.storeKey ?? localStoreKey(in: directory, creating: !readOnly)
                let opened = Opened(database: database, storeKey: try storeKey(key))
                if !readOnly {
                    try await LegacySnapshotImport.run(from: directory, into: database, sealing: StoreSealing(key: opened.storeKey), logger: logger)
                }
                return opened
            } catch {
                await database.close()
                throw error
            }
        case .postgres(let location):
            guard let key = configuration.storeKey else {
                throw StoreError.keyUnavailable("a PostgreSQL store needs a store key, the same on every instance: give --store-key-file or the systemd credential latchkey-store-key")
            }
            let database = PostgresProviderDatabase(configuration: try location.connectionConfiguration(), logger: logger)
            return Opened(database: database, storeKey: try storeKey(key))
        }
    }

    private static func storeKey(_ bytes: Data) throws -> SymmetricKey {
        guard bytes.count == 32 else { throw StoreError.keyUnavailable("the store key must be 32 bytes") }
        return SymmetricKey(data: bytes)
    }

    /// `store.key` beside a SQLite database, made on first start when `creating`.
    private static func localStoreKey(in directory: URL, creating: Bool) throws -> Data {
        let path = directory.appendingPathComponent(StoreFiles.storeKeyName).path
        if !FileManager.default.fileExists(atPath: path) {
            guard creating else {
                throw StoreError.keyUnavailable("no store.key in \(directory.path): give the store key with --store-key-file or the systemd credential latchkey-store-key")
            }
            try StoreFiles.createKey(at: path, bytes: try SecureRandom.bytes(count: 32))
        }
        return try StoreFiles.readKey(at: path)
    }
}
