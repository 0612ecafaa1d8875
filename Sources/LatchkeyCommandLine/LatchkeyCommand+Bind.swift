import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey

extension LatchkeyCommand {
    /// `latchkey bind <url>`: registers a new credential from a bind URL or deep link.
    struct Bind: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "bind", abstract: "Bind a new credential from a bind URL (https://…/v1/bind/… or <scheme>://bind?…).")

        @Argument(help: "The bind URL.")
        var url: String

        @OptionGroup var store: StoreOptions
        @OptionGroup var answers: StepAnswers
        @OptionGroup var protection: KeyProtectionOptions
        @OptionGroup var attestation: AttestationOptions

        func run() async throws {
            guard let link = URL(string: url), let provider = Embedded.provider(of: link), let host = provider.host else {
                throw ValidationError("\(url) is not a bind URL (https://<provider>/v1/bind/<job>?token=… or <scheme>://bind?api_base_url=…&job_id=…&token=…)")
            }
            // The user typed this link: its provider is the one host this run may contact.
            let (attest, authorityHosts) = try attestation.setting()
            let embedded = try store.embedded(allowing: [host] + authorityHosts, answers: answers, keyProtection: protection.setting(), attestation: attest)
            let choice = embedded.keyProtectionForNewCredentials()
            let bound = try await embedded.registerCredential(from: link)
            KeyProtectionOptions.report(bound.credential, choice: choice)
            if store.json {
                return try JSONOutput.print(BoundCredentialOutput(
                    credential: CredentialOutput(bound.credential), postBindingRedirectURI: bound.postBindingRedirectURI?.absoluteString
                ))
            }
            TextOutput.line("Bound credential \(bound.credential.id)")
            TextOutput.line("  user \(TextOutput.field(bound.credential.user.name)) at \(TextOutput.field(bound.credential.issuer?.absoluteString ?? bound.credential.rpID))")
            if bound.credential.attestation == "tpm" { TextOutput.line("  its key was attested as made in this host's TPM (tpm attestation)") }
            if let redirect = bound.postBindingRedirectURI { TextOutput.line("Next: \(TextOutput.field(redirect.absoluteString, maximumLength: 4096))") }
        }
    }

    /// `latchkey list`: the credentials in the vault.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the credentials in the vault.")

        @OptionGroup var store: StoreOptions

        @Flag(help: "Exit 0 even when some vault records cannot be read (they are still reported).")
        var ignoreDamaged = false

        /// Damaged records are reported on stderr by handle (and in `--json`'s `damaged`),
        /// and make the exit status 1: a listing that silently lost a credential would
        /// look complete (docs/SECURITY.md, "The vault").
        func run() async throws {
            // TPM keys are tried in the TPM, so one that cannot sign here is marked.
            let scan = try await store.embedded().scanCredentials(checkingKeys: true)
            for record in scan.damaged {
                TextOutput.error("latchkey: damaged vault record \(TextOutput.field(record.handle)): \(TextOutput.field(record.reason))")
            }
            if store.json {
                try JSONOutput.print(CredentialListOutput(scan))
            } else if scan.credentials.isEmpty {
                TextOutput.line("No credentials in \(store.directory.path).")
            }
            if !store.json {
                for credential in scan.credentials {
                    let used = credential.lastUsedAt.map { "last used \($0.formatted(.iso8601))" } ?? "never used"
                    let key = credential.unusableReason.map { "\(credential.keyProtection) key UNUSABLE: \(TextOutput.field($0))" } ?? "\(credential.keyProtection) key"
                    TextOutput.line("\(credential.id)  \(TextOutput.field(credential.user.name))  \(TextOutput.field(credential.issuer?.absoluteString ?? credential.rpID))  \(credential.state)  \(key)  \(used)")
                }
            }
            if !scan.damaged.isEmpty, !ignoreDamaged {
                throw CommandFailure("\(scan.damaged.count) vault record(s) could not be read; --ignore-damaged lists the rest with exit 0")
            }
        }
    }

    /// `latchkey delete <id>`: deletes a credential's key from this host.
    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a credential from the vault (the provider is not told).")

        @Argument(help: "The credential id, as `latchkey list` shows it (after `--` when it starts with '-').")
        var id: String

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let deleted = try await store.embedded().deleteCredential(id: id)
            if store.json { return try JSONOutput.print(DeletionOutput(id: id, deleted: deleted)) }
            TextOutput.line(deleted ? "Deleted \(TextOutput.field(id))." : "No credential \(TextOutput.field(id)) in the vault; nothing deleted.")
        }
    }
}
