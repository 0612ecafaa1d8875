import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey
import LatchkeyCrypto
import LatchkeyProtocol

extension LatchkeyCommand {
    /// `latchkey ssh …`: short-lived OpenSSH certificates from a provider's SSH CA for
    /// keys that stay in the vault or the TPM (docs/PROTOCOL.md section 12).
    struct SSH: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ssh",
            abstract: "Get OpenSSH certificates for keys kept in the vault or the TPM, served by latchkey agent as an ssh-agent.",
            subcommands: [SSHLoginCommand.self, SSHList.self]
        )
    }

    /// `latchkey ssh login --issuer URL`: the vault's SSH key for that provider (made the
    /// first time), a sign-in, and a certificate kept beside the key.
    struct SSHLoginCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "login",
            abstract: "Sign in and get an SSH certificate for this vault's SSH key (made the first time); latchkey agent serves both to ssh."
        )

        @Option(help: ArgumentHelp("The identity provider (issuer) URL.", valueName: "url"))
        var issuer: String

        @Option(name: .customLong("principal"), help: ArgumentHelp("A principal (user name on hosts) to ask for; repeat for more (default: every one granted).", valueName: "name"))
        var principals: [String] = []

        @Option(help: ArgumentHelp("How long the certificate should last (a number and s, m or h; default: the provider's).", valueName: "duration"))
        var lifetime: String?

        @Flag(help: "For a service, not a person: certify the client's own SSH key with its client credentials tokens (its client key, see `latchkey client-key`); needs --client-id and principals an admin granted the client.")
        var clientCredentials = false

        @OptionGroup var client: ClientOptions
        @OptionGroup var store: StoreOptions
        @OptionGroup var answers: StepAnswers
        @OptionGroup var protection: KeyProtectionOptions
        @OptionGroup var attestation: AttestationOptions

        func validate() throws {
            if clientCredentials {
                guard client.clientID != ClientOptions.defaultClientID else { throw ValidationError("--client-credentials needs --client-id: the client registered with your client key") }
                guard client.credential == nil else { throw ValidationError("--credential names a person's credential; --client-credentials signs with the client key") }
            }
            for principal in principals where !SSHCertificate.isAcceptablePrincipal(principal) {
                throw ValidationError("--principal \(principal.displaySafe(maximumLength: 64)): a name without commas, spaces or control characters")
            }
        }

        func run() async throws {
            let (issuerURL, host) = try ClientOptions.issuer(issuer)
            let (attest, authorityHosts) = try attestation.setting()
            let embedded = try store.embedded(
                allowing: [host] + authorityHosts, answers: answers, keyProtection: protection.setting(), signInFlow: client.flow.setting, attestation: attest
            )
            let seconds = try lifetime.map { Int(try ListEvents.duration($0)) }
            let asked = principals.isEmpty ? nil : principals
            let login = clientCredentials
                ? try await embedded.sshLogin(issuer: issuerURL, clientCredentials: client.clientID, principals: asked, lifetime: seconds)
                : try await embedded.sshLogin(issuer: issuerURL, clientID: client.clientID, redirectURI: try client.redirect(), principals: asked, lifetime: seconds)
            if store.json { return try JSONOutput.print(SSHLoginOutput(login)) }
            TextOutput.line("SSH certificate for \(login.principals.map { $0.displaySafe(maximumLength: 256) }.joined(separator: ", ")), valid until \(login.validBefore) (serial \(login.serial))")
            TextOutput.line("Key: \(login.keyProtection) key \(login.handle.rawValue); latchkey agent serves it to ssh (SSH_AUTH_SOCK).")
        }
    }

    /// `latchkey ssh list`: the vault's SSH keys, their certificates and expiry.
    struct SSHList: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List this vault's SSH keys, their certificates, principals and expiry.")

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let keys = try store.embedded(allowing: []).sshKeys()
            if store.json { return try JSONOutput.print(keys.map(SSHLoginOutput.init)) }
            if keys.isEmpty { TextOutput.line("No SSH keys: latchkey ssh login --issuer URL makes one.") }
            for key in keys {
                let expiry = key.validBefore.map { $0 > Date() ? "valid until \($0)" : "expired \($0)" } ?? "no certificate"
                let owner = key.clientID.map { "  client \($0.displaySafe(maximumLength: 128))" } ?? ""
                TextOutput.line("\(key.handle.rawValue)  \(key.issuer.displaySafe(maximumLength: 256))\(owner)  \(key.principals.map { $0.displaySafe(maximumLength: 256) }.joined(separator: ","))  \(expiry)")
                TextOutput.line("  \(key.publicKey.displaySafe(maximumLength: 512))")
            }
        }
    }

    struct SSHLoginOutput: Encodable {
        var handle: String
        var clientID: String?
        var publicKey: String
        var certificate: String?
        var serial: String?
        var principals: [String]
        var validBefore: Date?
        var keyProtection: String

        init(_ login: SSHLogin) {
            handle = login.handle.rawValue
            publicKey = login.publicKey
            certificate = login.certificate
            serial = login.serial
            principals = login.principals
            validBefore = login.validBefore
            keyProtection = login.keyProtection.rawValue
        }

        init(_ key: SSHKeyListing) {
            handle = key.handle.rawValue
            clientID = key.clientID
            publicKey = key.publicKey
            certificate = key.certificate
            serial = key.serial
            principals = key.principals
            validBefore = key.validBefore
            keyProtection = key.keyProtection.rawValue
        }
    }
}
