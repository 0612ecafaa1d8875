import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import Glibc
import Latchkey
import LatchkeyOAuth

extension LatchkeyCommand {
    /// `latchkey client-key --issuer URL --client-id ID`: the service's own signing key for
    /// `private_key_jwt` (RFC 7523), made the first time; prints its public JWK Set, which
    /// the provider's operator registers (docs/SECURITY.md, "Client keys").
    struct ClientKeyCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "client-key",
            abstract: "Make (the first time) or show a client's signing key for private_key_jwt, and print its public JWK Set to register at the provider."
        )

        @Option(help: ArgumentHelp("The identity provider (issuer) URL.", valueName: "url"))
        var issuer: String

        @Option(help: ArgumentHelp("The OAuth client id registered at the provider.", valueName: "id"))
        var clientID: String

        @Flag(help: "Print the public key as PEM (for providers that take PEM, such as Auth0) instead of a JWK Set.")
        var pem = false

        @Flag(help: "Delete the key (and the tokens kept with it) instead; the provider keeps the public key until its operator removes it.")
        var delete = false

        @OptionGroup var protection: KeyProtectionOptions
        @OptionGroup var store: StoreOptions

        func validate() throws {
            guard (1...255).contains(clientID.utf8.count), clientID.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) else {
                throw ValidationError("--client-id is 1 to 255 printable ASCII characters")
            }
        }

        func run() async throws {
            let (issuerURL, host) = try ClientOptions.issuer(issuer)
            let embedded = try store.embedded(allowing: [host], keyProtection: protection.setting())
            if delete {
                let deleted = try embedded.deleteClientKey(issuer: issuerURL, clientID: clientID)
                if store.json { return try JSONOutput.print(DeletionOutput(id: clientID, deleted: deleted)) }
                return TextOutput.line(deleted ? "Deleted the client key of \(TextOutput.field(clientID))." : "No client key for \(TextOutput.field(clientID)) at \(TextOutput.field(issuerURL.absoluteString)); nothing deleted.")
            }
            let existed = try embedded.existingClientKey(issuer: issuerURL, clientID: clientID) != nil
            let key = try await embedded.clientKey(issuer: issuerURL, clientID: clientID)
            Terminal.note("\(existed ? "Client key" : "New client key") for \(TextOutput.field(clientID)) at \(TextOutput.field(issuerURL.absoluteString)): kid \(key.keyID), \(key.keyProtection) key")
            if store.json { return try JSONOutput.print(ClientKeyOutput(key, created: !existed)) }
            if pem {
                FileDescriptorIO.write(STDOUT_FILENO, key.publicKeyPEM)
                return
            }
            // The JWK Set alone on stdout: `latchkey client-key … | latchkey admin create-client --jwks -`.
            TextOutput.line(String(decoding: key.publicJWKSet, as: UTF8.self))
        }
    }
}
