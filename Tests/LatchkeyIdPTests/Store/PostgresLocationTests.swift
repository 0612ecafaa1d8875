import Foundation
@testable import LatchkeyIdP
import LatchkeyTestSupport
import Testing

/// The PostgreSQL URL as libpq spells it, read strictly, and its TLS settings made usable
/// (or refused) once, when the store starts, not at the first request.
@Suite("PostgreSQL location: the database URL and its TLS settings")
struct PostgresLocationTests {
    @Test("the URL's parts, libpq's sslmode names, and a description without the password")
    func parts() throws {
        let location = try PostgresLocation(url: "postgresql://ada:s3cret@db.example.com:6543/idp?sslmode=verify-full", environment: [:])
        #expect(location.host == "db.example.com" && location.port == 6543 && location.user == "ada" && location.database == "idp")
        #expect(location.tls == .require)
        #expect(location.password == "s3cret")
        #expect(!location.description.contains("s3cret"))
        let filed = try PostgresLocation(url: "postgres://ada:fromurl@db/idp", password: "fromfile", environment: ["PGPASSWORD": "fromenv"])
        #expect(filed.password == "fromfile", "a password file wins over the URL")
        #expect(filed.tls == .prefer && filed.port == 5432)
    }

    @Test("a URL of another scheme, without a host, too long, with an unknown parameter or sslmode is refused as invalid configuration", arguments: [
        "mysql://ada@db/idp", "postgres:///idp", "postgres://ada@db/idp?sslmode=maybe", "postgres://ada@db/idp?options=-c%20x",
        "postgres://ada@db/" + String(repeating: "x", count: 2100),
    ])
    func refused(_ url: String) {
        #expect { try PostgresLocation(url: url, environment: [:]) } throws: { ($0 as? StoreError)?.code == .invalidConfiguration }
    }

    @Test("an sslrootcert that is missing or not PEM stops the store at start with a clear reason; with sslmode=disable it is never read")
    func unreadableRootCertificate() throws {
        let scratch = try TemporaryDirectory()
        let notPEM = scratch.url.appendingPathComponent("root.crt")
        try Data("not a certificate".utf8).write(to: notPEM)
        for path in [scratch.url.appendingPathComponent("missing.crt").path, notPEM.path] {
            for mode in ["require", "prefer"] {
                let location = try PostgresLocation(url: "postgres://ada@db/idp?sslmode=\(mode)&sslrootcert=\(path)", environment: [:])
                #expect {
                    _ = try location.connectionConfiguration()
                } throws: { error in
                    let error = error as? StoreError
                    return error?.code == .invalidConfiguration && error?.reason.contains("sslrootcert") == true
                }
            }
        }
        let plain = try PostgresLocation(url: "postgres://ada@db/idp?sslmode=disable&sslrootcert=\(notPEM.path)", environment: [:])
        _ = try plain.connectionConfiguration()
    }
}
