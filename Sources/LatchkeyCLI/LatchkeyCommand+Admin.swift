import ArgumentParser
import Foundation

extension LatchkeyCommand {
    /// `latchkey admin …`: the provider's admin API from the command line.
    struct Admin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Administer a Latchkey identity provider.",
            subcommands: [CreateIdentity.self, Outbox.self]
        )
    }

    /// Options every admin command takes.
    struct AdminOptions: ParsableArguments {
        @Option(help: "The identity provider's issuer URL.")
        var idp: String

        @Option(help: "The admin token (default: $LATCHKEY_ADMIN_TOKEN).")
        var adminToken: String?

        @Flag(help: "Print JSON.")
        var json = false

        func send(_ method: String, _ path: String, body: [String: Any]? = nil) async throws -> [String: Any] {
            guard let base = URL(string: idp), base.host != nil else { throw ValidationError("--idp \(idp) is not a URL") }
            guard let token = adminToken ?? ProcessInfo.processInfo.environment["LATCHKEY_ADMIN_TOKEN"] else {
                throw ValidationError("give --admin-token or set LATCHKEY_ADMIN_TOKEN")
            }
            return try await AdminClient(issuer: base, token: token).send(method, path, body: body)
        }

        func print(json object: [String: Any]) throws {
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
            Swift.print(String(decoding: data, as: UTF8.self))
        }
    }

    /// `latchkey admin create-identity`: a new identity and its bind URL.
    struct CreateIdentity: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an identity and print its bind URL.")

        @OptionGroup var options: AdminOptions

        @Option(help: "Username.")
        var username: String

        @Option(help: "E-mail address (where verification codes would go).")
        var email: String?

        @Option(help: "Display name.")
        var displayName: String?

        func run() async throws {
            var body: [String: Any] = ["username": username]
            if let email { body["email"] = email }
            if let displayName { body["displayName"] = displayName }
            let created = try await options.send("POST", "admin/identities", body: body)
            if options.json { return try options.print(json: created) }
            let identity = created["identity"] as? [String: Any]
            print("Identity: \(identity?["id"] as? String ?? "?") (\(username))")
            print("Bind URL: \(created["bindURL"] as? String ?? "?")")
        }
    }

    /// `latchkey admin outbox`: messages the provider would have e-mailed.
    struct Outbox: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the messages the provider would have e-mailed.")

        @OptionGroup var options: AdminOptions

        func run() async throws {
            let outbox = try await options.send("GET", "admin/outbox")
            if options.json { return try options.print(json: outbox) }
            for message in outbox["messages"] as? [[String: Any]] ?? [] {
                print("To: \(message["to"] as? String ?? "?")  Subject: \(message["subject"] as? String ?? "")")
                print("   \(message["body"] as? String ?? "")")
            }
        }
    }
}
