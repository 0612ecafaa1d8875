public import Foundation
import NIOSSL
import PostgresNIO

/// Where a PostgreSQL store is: a `postgres://user[:password]@host[:port]/database` URL
/// (`postgresql://` too), with `sslmode` and `sslrootcert` as libpq spells them.
///
/// The password comes, first found first, from ``password`` (a file or systemd
/// credential the CLI read), the URL, or `PGPASSWORD`; never only from a command line,
/// where every local user can read it (`/proc/<pid>/cmdline`). Whenever TLS is used the
/// server's certificate is verified against the system's roots or `sslrootcert`:
/// `require` is read as libpq's `verify-full`, since an unverified TLS connection gives
/// an attacker on the path the database password and every row.
public struct PostgresLocation: Sendable, CustomStringConvertible {
    public enum TLSMode: String, Sendable {
        case disable, prefer, require
    }

    public var host: String
    public var port: Int
    public var user: String
    public var database: String
    public var password: String?
    public var tls: TLSMode
    public var rootCertificatePath: String?

    /// Parses `text`; `password` (from a file or credential) wins over one in the URL.
    public init(url text: String, password: String? = nil, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard text.utf8.count <= 2048, let components = URLComponents(string: text),
              components.scheme == "postgres" || components.scheme == "postgresql",
              let host = components.host, !host.isEmpty
        else {
            throw StoreError.invalidConfiguration("the database URL must look like postgres://user@host:5432/database")
        }
        self.host = host
        port = components.port ?? 5432
        user = components.user ?? environment["PGUSER"] ?? "postgres"
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        database = path.isEmpty ? user : path
        self.password = password ?? components.password ?? environment["PGPASSWORD"]
        var mode = TLSMode.prefer
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                switch item.value ?? "" {
                case "disable": mode = .disable
                case "allow", "prefer": mode = .prefer
                case "require", "verify-ca", "verify-full": mode = .require
                default: throw StoreError.invalidConfiguration("sslmode must be disable, prefer, require, verify-ca or verify-full")
                }
            case "sslrootcert":
                rootCertificatePath = item.value
            default:
                throw StoreError.invalidConfiguration("unknown database URL parameter \(item.name) (known: sslmode, sslrootcert)")
            }
        }
        tls = mode
    }

    /// The URL without its password, for logs and errors.
    public var description: String {
        "postgres://\(user)@\(host):\(port)/\(database)?sslmode=\(tls.rawValue)"
    }

    /// How one connection is made. The TLS context (with `sslrootcert` read) is made here,
    /// once per store, so an unreadable root certificate stops the provider at start.
    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let tlsSetting: PostgresConnection.Configuration.TLS
        switch tls {
        case .disable:
            tlsSetting = .disable
        case .prefer, .require:
            var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
            if let rootCertificatePath {
                tlsConfiguration.trustRoots = .file(rootCertificatePath)
            }
            let context: NIOSSLContext
            do {
                context = try NIOSSLContext(configuration: tlsConfiguration)
            } catch {
                throw StoreError.invalidConfiguration("the database's TLS settings cannot be used (is sslrootcert a readable PEM file?)", underlying: error)
            }
            tlsSetting = tls == .require ? .require(context) : .prefer(context)
        }
        var configuration = PostgresConnection.Configuration(host: host, port: port, username: user, password: password, database: database, tls: tlsSetting)
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }
}
