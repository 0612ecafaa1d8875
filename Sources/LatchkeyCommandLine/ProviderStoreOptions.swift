package import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where the provider's store is, and the key that seals its secrets: `serve` takes these,
/// and so does `admin events verify`, which reads the same store offline. Secrets come from
/// files or systemd credentials, never from argv.
package struct ProviderStoreOptions: ParsableArguments {
    @Option(help: "Directory for the SQLite store (latchkey.sqlite3 and store.key, 0700). Without it and without --database, state is in memory.")
    package var dataDir: String?

    @Option(help: ArgumentHelp("PostgreSQL store, postgres://user@host:port/db[?sslmode=require] (default for serve: $LATCHKEY_DATABASE_URL). The password comes from --database-password-file, the systemd credential latchkey-database-password, $PGPASSWORD, or the URL in $LATCHKEY_DATABASE_URL (never from the command line).", valueName: "url"))
    package var database: String?

    @Option(help: ArgumentHelp("File holding the PostgreSQL password.", valueName: "file"))
    package var databasePasswordFile: String?

    @Option(help: ArgumentHelp("File holding the 32-byte key that seals the store's signing keys (default: the systemd credential latchkey-store-key; for SQLite, store.key in --data-dir). Every PostgreSQL instance needs the same one.", valueName: "file"))
    package var storeKeyFile: String?

    package init() {}

    /// Whether a database URL names a password (`postgres://user:password@…`, an empty
    /// one included). Such a URL is taken from the environment, never from argv.
    package static func carriesPassword(_ url: String) -> Bool {
        if let components = URLComponents(string: url) { return components.password != nil }
        // Not a URL PostgresLocation would take either; refused as one that might carry a
        // password when its authority has a colon before an `@`.
        guard let scheme = url.firstRange(of: "://") else { return false }
        let authority = url[scheme.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard let at = authority.lastIndex(of: "@") else { return false }
        return authority[..<at].contains(":")
    }
}
