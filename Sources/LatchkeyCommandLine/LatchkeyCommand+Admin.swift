import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey
import LatchkeyProtocol

extension LatchkeyCommand {
    /// `latchkey admin …`: the provider's admin API from the command line.
    struct Admin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "admin",
            abstract: "Administer a Latchkey identity provider.",
            subcommands: [
                CreateIdentity.self, ListIdentities.self, FindIdentity.self, DeleteIdentity.self,
                ListCredentials.self, RevokeCredential.self, CreateBindJob.self, RotateSigningKey.self, Outbox.self,
                CreateClient.self, ListClients.self, DeleteClient.self, Events.self, GenerateToken.self,
                SSHAuthorityKeys.self, RotateSSHAuthority.self, SetSSHPrincipals.self, SSHHostCertificateCommand.self,
                RenameIdentity.self, SetPOSIX.self, UnsetPOSIX.self, CreateGroup.self, DeleteGroup.self, AddMember.self, RemoveMember.self,
                ListGroups.self, SetHostLabels.self, GrantHostAccess.self, RevokeHostAccess.self,
            ]
        )
    }

    /// Options every admin command takes.
    struct AdminOptions: ParsableArguments {
        @Option(help: "The identity provider's issuer URL.")
        var idp: String

        @Option(help: ArgumentHelp("File holding the admin token (default: $LATCHKEY_ADMIN_TOKEN, or the systemd credential latchkey-admin-token).", valueName: "file"))
        var adminTokenFile: String?

        @Flag(help: "Print JSON.")
        var json = false

        func send<Body, Answer>(
            _ endpoint: AdminAPI.Endpoint<Body, Answer>, _ parameters: String..., query: [(String, String)] = [], body: Body? = nil
        ) async throws -> Answer {
            guard let base = URL(string: idp), base.host != nil else { throw ValidationError("--idp \(idp) is not a URL") }
            guard let token = try AdminToken.supplied(file: adminTokenFile)?.token else {
                throw ValidationError("set LATCHKEY_ADMIN_TOKEN or give --admin-token-file (the token is never taken from the command line)")
            }
            return try await AdminClient(issuer: base, token: token).send(endpoint, parameters, query: query, body: body)
        }

        /// The provider's answer as `--json` prints it.
        func print(json value: some Encodable) throws {
            try JSONOutput.print(value)
        }
    }

    /// `latchkey admin generate-token`: a new admin token, for `--admin-token-file`,
    /// `$LATCHKEY_ADMIN_TOKEN` or the systemd credential. It talks to no provider.
    struct GenerateToken: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate-token",
            abstract: "Print a new admin token (256 random bits, base64url), e.g. (umask 077; latchkey admin generate-token > /etc/latchkey/admin-token)."
        )

        func run() throws {
            TextOutput.line(try AdminToken.generate())
        }
    }

    /// `latchkey admin create-identity`: a new identity and its bind URL.
    struct CreateIdentity: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "create-identity", abstract: "Create an identity and print its bind URL.")

        @OptionGroup var options: AdminOptions

        @Option(help: "Username.")
        var username: String

        @Option(help: "E-mail address (where verification codes would go).")
        var email: String?

        @Option(help: "Display name.")
        var displayName: String?

        @Option(help: ArgumentHelp("Refuse the identity's credentials without this attestation, whatever the provider's policy (tpm).", valueName: "tpm"))
        var requireAttestation: String?

        func run() async throws {
            if let requireAttestation, requireAttestation != "tpm" { throw ValidationError("--require-attestation takes tpm") }
            let body = AdminAPI.IdentityCreation(username: username, email: email, displayName: displayName, requireAttestation: requireAttestation)
            let created = try await options.send(AdminAPI.createIdentity, body: body)
            if options.json { return try options.print(json: created) }
            TextOutput.line("Identity: \(created.identity.id.displaySafe(maximumLength: 256)) (\(username))")
            TextOutput.line("Bind URL: \(created.bindURL.displaySafe(maximumLength: 4096))")
        }
    }

    /// `latchkey admin outbox`: messages the provider would have e-mailed.
    struct Outbox: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "outbox", abstract: "Print the messages the provider would have e-mailed.")

        @OptionGroup var options: AdminOptions

        func run() async throws {
            let outbox = try await options.send(AdminAPI.outbox)
            if options.json { return try options.print(json: outbox) }
            for message in outbox.messages {
                TextOutput.line("To: \(message.to.displaySafe(maximumLength: 256))  Subject: \(message.subject.displaySafe(maximumLength: 256))")
                TextOutput.line("   \(message.body.displaySafe(maximumLength: 4096))")
            }
        }
    }
}

extension LatchkeyCommand {
    /// `latchkey admin list-identities`: a page of identities in creation order.
    struct ListIdentities: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list-identities", abstract: "List identities, oldest first, a page at a time.")

        @OptionGroup var options: AdminOptions

        @Option(parsing: .unconditional, help: "Start after this identity id (the previous page's `next`).")
        var after: String?

        @Option(help: "Identities per page (1 to 500).")
        var limit = 100

        func run() async throws {
            var query = [(AdminAPI.IdentityQuery.limit, "\(limit)")]
            if let after { query.append((AdminAPI.IdentityQuery.after, after)) }
            let page = try await options.send(AdminAPI.listIdentities, query: query)
            if options.json { return try options.print(json: page) }
            for identity in page.identities {
                TextOutput.line(AdminOptions.line(identity))
            }
            if let next = page.next { TextOutput.line("More: --after \(next.displaySafe(maximumLength: 256))") }
        }
    }

    /// `latchkey admin find-identity`: one identity by id or username.
    struct FindIdentity: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "find-identity", abstract: "Show an identity, by id or by username.")

        @OptionGroup var options: AdminOptions

        @Argument(help: "The identity's id or username (after `--` when it starts with '-').")
        var identity: String

        func run() async throws {
            let found = try await options.send(AdminAPI.listIdentities, query: [(AdminAPI.IdentityQuery.username, identity)])
            var list = found.identities
            if list.isEmpty,
               let byID = try? await options.send(AdminAPI.identity, identity) {
                list = [byID.identity]
            }
            guard let match = list.first else { throw CommandFailure("no identity \(identity.displaySafe(maximumLength: 256))") }
            if options.json { return try options.print(json: AdminAPI.IdentityAnswer(identity: match)) }
            TextOutput.line(AdminOptions.line(match))
        }
    }

    /// `latchkey admin delete-identity`: the identity, its credentials and its tokens.
    struct DeleteIdentity: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete-identity", abstract: "Delete an identity; its credentials and tokens stop working at once.")

        @OptionGroup var options: AdminOptions

        @Argument(help: "The identity's id (after `--` when it starts with '-').")
        var identity: String

        func run() async throws {
            let answer = try await options.send(AdminAPI.deleteIdentity, identity)
            if options.json { return try options.print(json: answer) }
            TextOutput.line("Deleted \(identity.displaySafe(maximumLength: 256)); its credentials and tokens are revoked")
        }
    }

    /// `latchkey admin list-credentials`: an identity's credentials.
    struct ListCredentials: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list-credentials", abstract: "List an identity's credentials.")

        @OptionGroup var options: AdminOptions

        @Argument(help: "The identity's id (after `--` when it starts with '-').")
        var identity: String

        func run() async throws {
            let answer = try await options.send(AdminAPI.credentials, identity)
            if options.json { return try options.print(json: answer) }
            for credential in answer.credentials {
                let revoked = credential.revoked ? "  revoked" : ""
                let from = credential.registeredFrom.map { "  from \(AdminOptions.text($0))" } ?? ""
                let transports = credential.transports.map { $0.isEmpty ? "" : "  transports \(AdminOptions.text($0.joined(separator: ",")))" } ?? ""
                let backup = credential.backupEligible == true ? (credential.backedUp == true ? "  backed up" : "  backup eligible") : ""
                let attestation = credential.attestation.map { "  attestation \(AdminOptions.text($0))" } ?? ""
                let aaguid = credential.aaguid.map { "  aaguid \(AdminOptions.text($0))" } ?? ""
                TextOutput.line("\(AdminOptions.text(credential.id))  \(AdminOptions.text(credential.algorithm))  counter \(credential.signCount)\(from)\(transports)\(backup)\(attestation)\(aaguid)\(revoked)")
            }
        }
    }

    /// `latchkey admin revoke-credential`: the credential and every token issued through it.
    struct RevokeCredential: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "revoke-credential", abstract: "Revoke a credential; its tokens stop working at once.")

        @OptionGroup var options: AdminOptions

        @Argument(help: "The credential's id (base64url; after `--` when it starts with '-').")
        var credential: String

        func run() async throws {
            let answer = try await options.send(AdminAPI.revokeCredential, credential)
            if options.json { return try options.print(json: answer) }
            TextOutput.line("Revoked \(credential.displaySafe(maximumLength: 256)) and its tokens")
        }
    }

    /// `latchkey admin create-bind-job`: a bind URL for an existing identity's new device.
    struct CreateBindJob: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "create-bind-job", abstract: "Create a bind URL for an existing identity (a new device, or a recovery).")

        @OptionGroup var options: AdminOptions

        @Argument(help: "The identity's id (after `--` when it starts with '-').")
        var identity: String

        @Option(help: "bind (a further device) or recovery (replaces every other credential).")
        var kind = "bind"

        @Option(help: "Seconds the URL stays valid.")
        var expiresIn: Double?

        @Flag(help: "Ask for a code e-mailed to the identity before binding.")
        var requireEmailCode = false

        func run() async throws {
            guard ["bind", "recovery"].contains(kind) else { throw ValidationError("--kind must be bind or recovery") }
            let body = AdminAPI.BindJobRequest(kind: kind, expiresIn: expiresIn, requireEmailCode: requireEmailCode)
            let answer = try await options.send(AdminAPI.createBindJob, identity, body: body)
            if options.json { return try options.print(json: answer) }
            TextOutput.line("Bind URL: \(answer.bindURL.displaySafe(maximumLength: 4096))")
        }
    }

    /// `latchkey admin rotate-signing-key`: a new ID-token signing key.
    struct RotateSigningKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-signing-key",
            abstract: "Start a signing-key rotation: the new key is published now and signs after the publication delay."
        )

        @OptionGroup var options: AdminOptions

        func run() async throws {
            let answer = try await options.send(AdminAPI.rotateSigningKey)
            if options.json { return try options.print(json: answer) }
            let start = Date(timeIntervalSince1970: Double(answer.signsFrom))
            TextOutput.line("New key \(AdminOptions.text(answer.kid)) is published and signs from \(start)")
        }
    }
}

extension LatchkeyCommand.AdminOptions {
    /// One identity as a line: id, username, e-mail (provider text made safe to print).
    static func line(_ identity: AdminAPI.Identity) -> String {
        let email = identity.email.map { "  <\($0.displaySafe(maximumLength: 256))>" } ?? ""
        return "\(text(identity.id))  \(text(identity.username))\(email)"
    }

    /// A provider's string, safe to print on a terminal.
    static func text(_ value: String) -> String {
        TextOutput.field(value, maximumLength: 256)
    }
}
