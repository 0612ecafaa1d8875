import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import Glibc
import LatchkeyOAuth
import LatchkeyProtocol

extension LatchkeyCommand {
    /// `latchkey admin create-client`: registers an OAuth client (docs/PROTOCOL.md,
    /// "Clients and the client credentials grant"). With `--jwks` the client is keyed and
    /// authenticates with `private_key_jwt`; without, it is public.
    struct CreateClient: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create-client",
            abstract: "Register an OAuth client: keyed (private_key_jwt) with --jwks, public without.",
            discussion: "The JWK Set is what `latchkey client-key` prints on the client's host."
        )

        @OptionGroup var options: AdminOptions

        @Option(help: "The client id (letters, digits, -._:).")
        var clientID: String

        @Option(help: "A name for people (default: the id).")
        var name: String?

        @Option(help: ArgumentHelp("The client's public JWK Set: a file, or - for standard input.", valueName: "file"))
        var jwks: String?

        @Option(name: .customLong("grant"), help: ArgumentHelp("A grant it may use (repeat): authorization_code, refresh_token, client_credentials, device_code.", valueName: "grant"))
        var grants: [String] = []

        @Option(name: .customLong("redirect-uri"), help: ArgumentHelp("A redirect URI (repeat), for authorization_code.", valueName: "uri"))
        var redirectURIs: [String] = []

        @Option(name: .customLong("scope"), help: ArgumentHelp("A scope it may ask for (repeat).", valueName: "scope"))
        var scopes: [String] = []

        /// The largest JWK Set read: eight keys fit many times over.
        static let maximumJWKSSize = 64 * 1024

        func run() async throws {
            let grantTypes = grants.map { $0 == "device_code" ? GrantType.deviceCode.rawValue : $0 }
            guard !grantTypes.isEmpty else { throw ValidationError("give at least one --grant") }
            let document = try jwks.map(Self.readJWKS)
            let registration = AdminAPI.Client(
                id: clientID, name: name, jwks: document, grantTypes: grantTypes, redirectURIs: redirectURIs, scopes: scopes
            )
            let created = try await options.send(AdminAPI.createClient, body: registration)
            if options.json { return try options.print(json: created) }
            TextOutput.line("Client: \(created.id) (\(created.jwks == nil ? "public" : "private_key_jwt, \(created.jwks?.keys.count ?? 0) key(s)"))")
            TextOutput.line("Grants: \(created.grantTypes.joined(separator: " "))")
            if !created.scopes.isEmpty { TextOutput.line("Scopes: \(created.scopes.joined(separator: " "))") }
        }

        /// A JWK Set from a file or standard input, bounded, decoded; the provider checks
        /// its keys.
        static func readJWKS(_ argument: String) throws -> JWKSDocument {
            let data: Data
            if argument == "-" {
                guard let read = FileDescriptorIO.read(STDIN_FILENO, upTo: maximumJWKSSize + 1) else { throw CommandFailure("cannot read --jwks from standard input") }
                data = read
            } else {
                guard let read = FileDescriptorIO.read(path: argument, upTo: maximumJWKSSize + 1) else { throw CommandFailure("cannot read --jwks file \(argument)") }
                data = read
            }
            guard data.count <= maximumJWKSSize else { throw CommandFailure("--jwks is over \(maximumJWKSSize) bytes") }
            guard let document = try? JSONDecoder().decode(JWKSDocument.self, from: data) else {
                throw CommandFailure("--jwks is not a JWK Set ({\"keys\": [...]})")
            }
            return document
        }
    }

    /// `latchkey admin list-clients`.
    struct ListClients: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list-clients", abstract: "List the registered OAuth clients.")

        @OptionGroup var options: AdminOptions

        func run() async throws {
            let list = try await options.send(AdminAPI.listClients)
            if options.json { return try options.print(json: list) }
            for client in list.clients {
                let kind = client.jwks == nil ? "public" : "private_key_jwt"
                TextOutput.line("\(client.id)  \(kind)  \(client.grantTypes.joined(separator: ","))  \(client.scopes.joined(separator: " "))")
            }
        }
    }

    /// `latchkey admin delete-client`.
    struct DeleteClient: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete-client", abstract: "Delete a registered OAuth client and end its client credentials tokens.")

        @OptionGroup var options: AdminOptions

        @Option(help: "The client id.")
        var clientID: String

        func run() async throws {
            let deleted = try await options.send(AdminAPI.deleteClient, clientID)
            if options.json { return try options.print(json: deleted) }
            TextOutput.line("Deleted client \(clientID).")
        }
    }
}
