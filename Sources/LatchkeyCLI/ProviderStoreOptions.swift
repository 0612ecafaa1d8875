import ArgumentParser
import Foundation
import LatchkeyIdP

/// Where the provider's store is, and the key that seals its secrets: `serve` takes these,
/// and so does `admin events verify`, which reads the same store offline. Secrets come from
/// files or systemd credentials, never from argv.
struct ProviderStoreOptions: ParsableArguments {
    @Option(help: "Directory for the SQLite store (latchkey.sqlite3 and store.key, 0700). Without it and without --database, state is in memory.")
    var dataDir: String?

    @Option(help: ArgumentHelp("PostgreSQL store, postgres://user@host:port/db[?sslmode=require] (default for serve: $LATCHKEY_DATABASE_URL). The password comes from --database-password-file, the systemd credential latchkey-database-password, the URL or $PGPASSWORD.", valueName: "url"))
    var database: String?

    @Option(help: ArgumentHelp("File holding the PostgreSQL password.", valueName: "file"))
    var databasePasswordFile: String?

    @Option(help: ArgumentHelp("File holding the 32-byte key that seals the store's signing keys (default: the systemd credential latchkey-store-key; for SQLite, store.key in --data-dir). Every PostgreSQL instance needs the same one.", valueName: "file"))
    var storeKeyFile: String?

    /// SQLite in --data-dir, PostgreSQL from --database (or `LATCHKEY_DATABASE_URL` in
    /// `environment`), or memory; the store key from its file or credential.
    func configure(_ configuration: inout ProviderConfiguration, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        if let storeKeyFile {
            configuration.storeKey = try SecretFile.read(storeKeyFile, exactly: 32)
        } else if let key = try SecretFile.credential("latchkey-store-key", exactly: 32) {
            configuration.storeKey = key
        }
        if let url = database ?? environment["LATCHKEY_DATABASE_URL"] {
            guard dataDir == nil else { throw ValidationError("give either --data-dir (SQLite) or --database (PostgreSQL), not both") }
            let password = try SecretFile.password(file: databasePasswordFile, credential: "latchkey-database-password")
            configuration.storage = .postgres(try PostgresLocation(url: url, password: password))
        } else if let dataDir {
            configuration.storage = .sqlite(directory: URL(fileURLWithPath: dataDir))
        }
    }
}
