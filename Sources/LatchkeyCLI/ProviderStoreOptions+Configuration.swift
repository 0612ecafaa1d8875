import ArgumentParser
import Foundation
import LatchkeyCommandLine
import LatchkeyIdP

extension ProviderStoreOptions {
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
}
