import ArgumentParser
import Foundation
import Hummingbird
import LatchkeyCrypto
import LatchkeyIdP

extension LatchkeyCommand {
    /// `latchkey serve`: runs the reference identity provider until SIGINT or SIGTERM.
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run the reference identity provider.")

        @Option(help: "Address to listen on.")
        var host = "127.0.0.1"

        @Option(help: "Port to listen on (0 picks a free one).")
        var port = 8080

        @Option(help: "Issuer URL, when it differs from http://<host>:<port> (behind a TLS proxy).")
        var issuer: String?

        @Option(help: "Bearer token for the admin API (default: $LATCHKEY_ADMIN_TOKEN, else a random one, printed).")
        var adminToken: String?

        @Option(help: "Directory that keeps identities, credentials and the signing key across restarts.")
        var dataDir: String?

        @Flag(help: "Require a code e-mailed to the outbox before binding.")
        var requireEmailCode = false

        @Flag(help: "Allow self-service sign-up (POST /v1/signup).")
        var allowSignup = false

        @Flag(help: "Turn off account recovery by e-mailed code.")
        var disableRecovery = false

        @Flag(help: "Print the issuer and admin token as one JSON line once listening.")
        var json = false

        func run() async throws {
            let generated = Base64URL.encode(try SecureRandom.bytes(count: 24))
            let token = adminToken ?? ProcessInfo.processInfo.environment["LATCHKEY_ADMIN_TOKEN"] ?? generated
            var configuration = ProviderConfiguration(host: host, port: port, issuer: try issuer.map(Self.parseURL), adminToken: token)
            configuration.dataDirectory = dataDir.map { URL(fileURLWithPath: $0) }
            configuration.requireEmailCodeForBinding = requireEmailCode
            configuration.selfRegistration = allowSignup
            configuration.recovery = !disableRecovery
            let app = try buildApplication(configuration: configuration) { issuer in
                // Unbuffered, so a supervising process sees the lines at once.
                if json {
                    let line = (try? JSONSerialization.data(withJSONObject: ["issuer": issuer.absoluteString, "adminToken": token], options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
                    FileHandle.standardOutput.write(line + Data("\n".utf8))
                } else {
                    FileHandle.standardOutput.write(Data("Latchkey identity provider listening\nIssuer: \(issuer.absoluteString)\nAdmin token: \(token)\n".utf8))
                }
            }
            // Stops cleanly on SIGINT and SIGTERM.
            try await app.runService()
        }

        static func parseURL(_ text: String) throws -> URL {
            guard let url = URL(string: text), url.scheme != nil, url.host != nil else {
                throw ValidationError("\(text) is not an absolute URL")
            }
            return url
        }
    }
}
