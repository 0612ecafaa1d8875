import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey

extension LatchkeyCommand {
    /// `latchkey signup`: creates an identity at a provider that allows self-registration,
    /// and binds a credential for it in this vault.
    struct SignUp: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "signup", abstract: "Sign up at a provider, passwordless: a profile, an e-mailed code, a new credential.")

        @Option(help: ArgumentHelp("The identity provider (issuer) URL.", valueName: "url"))
        var issuer: String

        @Option(help: ArgumentHelp("The username to sign up as.", valueName: "name"))
        var username: String

        @Option(help: ArgumentHelp("Given name.", valueName: "name"))
        var givenName: String?

        @Option(help: ArgumentHelp("Family name.", valueName: "name"))
        var familyName: String?

        @Option(help: ArgumentHelp("E-mail address (the code goes there).", valueName: "address"))
        var email: String?

        @OptionGroup var store: StoreOptions
        @OptionGroup var answers: StepAnswers
        @OptionGroup var protection: KeyProtectionOptions
        @OptionGroup var attestation: AttestationOptions

        func run() async throws {
            let (issuerURL, host) = try ClientOptions.issuer(issuer)
            var profile: [ProfileField: String] = [:]
            if let givenName { profile[.givenName] = givenName }
            if let familyName { profile[.familyName] = familyName }
            if let email { profile[.email] = email }
            let (attest, authorityHosts) = try attestation.setting()
            let embedded = try store.embedded(allowing: [host] + authorityHosts, answers: answers, keyProtection: protection.setting(), attestation: attest)
            let choice = embedded.keyProtectionForNewCredentials()
            let credential = try await embedded.signUp(issuer: issuerURL, username: username, profile: profile)
            KeyProtectionOptions.report(credential, choice: choice)
            if store.json { return try JSONOutput.print(BoundCredentialOutput(credential: CredentialOutput(credential))) }
            TextOutput.line("Signed up as \(TextOutput.field(credential.user.name)); credential \(credential.id)")
        }
    }

    /// `latchkey recover`: regains an account after losing every device; the new
    /// credential replaces the old ones.
    struct Recover: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "recover", abstract: "Recover an account with a code sent to its e-mail; old credentials stop working.")

        @Option(help: ArgumentHelp("The identity provider (issuer) URL.", valueName: "url"))
        var issuer: String

        @Option(help: ArgumentHelp("The account's username.", valueName: "name"))
        var username: String

        @OptionGroup var store: StoreOptions
        @OptionGroup var answers: StepAnswers
        @OptionGroup var protection: KeyProtectionOptions
        @OptionGroup var attestation: AttestationOptions

        func run() async throws {
            let (issuerURL, host) = try ClientOptions.issuer(issuer)
            let (attest, authorityHosts) = try attestation.setting()
            let embedded = try store.embedded(allowing: [host] + authorityHosts, answers: answers, keyProtection: protection.setting(), attestation: attest)
            let choice = embedded.keyProtectionForNewCredentials()
            let credential = try await embedded.recover(issuer: issuerURL, username: username)
            KeyProtectionOptions.report(credential, choice: choice)
            if store.json { return try JSONOutput.print(BoundCredentialOutput(credential: CredentialOutput(credential))) }
            TextOutput.line("Recovered \(TextOutput.field(credential.user.name)); new credential \(credential.id). The account's other credentials are revoked.")
        }
    }
}
