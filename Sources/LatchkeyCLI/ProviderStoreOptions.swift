import ArgumentParser
import Foundation
import LatchkeyIdP

/// Where the provider's store is, and the key that seals its secrets: `serve` takes these,
/// and so does `admin events verify`, which reads the same store offline. Secrets come from
/// files or systemd credentials, never from argv.
struct ProviderStoreOptions: ParsableArguments {
    @Option(help: "Directory for the SQLite store (latchkey.sqlite3 and store.key, 0700). Without it and without --database, state is in memory.")
    var dataDir: String?

    @Option(help: ArgumentHelp("PostgreSQL store, postgres://user@host:port/db[?sslmode=require] (default for serve: $LATCHKEY_DATABASE_URL). The password comes from --database-password-file, the systemd credential latchkey-database-password, $PGPASSWORD, or the URL in $LATCHKEY_DATABASE_URL (never from the command line).", valueName: "url"))
    var database: String?

    @Option(help: ArgumentHelp("File holding the PostgreSQL password.", valueName: "file"))
    var databasePasswordFile: String?

    @Option(help: ArgumentHelp("File holding the 32-byte key that seals the store's signing keys (default: the systemd credential latchkey-store-key; for SQLite, store.key in --data-dir). Every PostgreSQL instance needs the same one.", valueName: "file"))
    var storeKeyFile: String?

    /// SQLite in --data-dir, PostgreSQL from --database (or `LATCHKEY_DATABASE_URL` in
    /// `environment`), or memory; the store key from its file or credential.
    func configure(_ configuration: inout ProviderConfiguration, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        if let database, Self.carriesPassword(database) {
            // Not echoed: the URL holds the password.
            throw ValidationError(
                "--database must not carry a password: a command line is readable by every local user (ps, /proc). Give the password with "
                    + "--database-password-file, the systemd credential latchkey-database-password or $PGPASSWORD, or the whole URL in $LATCHKEY_DATABASE_URL"
            )
        }
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

    /// Whether a database URL names a password (`postgres://user:password@…`, an empty
    /// one included). Such a URL is taken from the environment, never from argv.
    static func carriesPassword(_ url: String) -> Bool {
        if let components = URLComponents(string: url) { return components.password != nil }
        // Not a URL PostgresLocation would take either; refused as one that might carry a
        // password when its authority has a colon before an `@`.
        guard let scheme = url.range(of: "://") else { return false }
        let authority = url[scheme.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard let at = authority.lastIndex(of: "@") else { return false }
        return authority[..<at].contains(":")
    }
}
