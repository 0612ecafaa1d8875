import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey
import LatchkeyProtocol

extension LatchkeyCommand {
    /// `latchkey open URL`: what a desktop runs for a clicked Latchkey link (`latchkey
    /// desktop install`). It says what the link asks and of which provider, acts only on
    /// allowed providers (`--allow-provider`, `links.conf`), asks on the terminal, then runs
    /// the same flow as `bind`, `authenticate`, `approve` or `import`
    /// (docs/guides/desktop-links.md; docs/SECURITY.md, "Links on a Linux desktop").
    struct Open: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "open",
            abstract: "Act on a Latchkey link (bind, authenticate, device approval, transfer) after saying what it asks and asking."
        )

        @Argument(help: "The link, e.g. latchkey://bind?api_base_url=…&job_id=…&token=….")
        var url: String

        @Option(name: .customLong("allow-provider"), help: ArgumentHelp("A provider whose links may be acted on (repeatable; also allow-provider lines in $XDG_CONFIG_HOME/latchkey/links.conf).", valueName: "url"))
        var allowProvider: [String] = []

        @Option(name: .customLong("scheme"), help: ArgumentHelp("A link scheme read as Latchkey's besides `latchkey` (repeatable).", valueName: "name"))
        var scheme: [String] = []

        @Option(parsing: .unconditional, help: ArgumentHelp("The credential to sign with, when several fit (an id may start with '-').", valueName: "id"))
        var credential: String?

        @Option(help: ArgumentHelp("This device's name, shown to the other device of a transfer (default: the host name).", valueName: "name"))
        var deviceName: String?

        @Flag(help: "Act without asking (what the link asks is still shown). Required when stdin is not a terminal.")
        var yes = false

        @OptionGroup var store: StoreOptions

        /// The scheme `latchkey desktop install` registers by default.
        static let defaultScheme = "latchkey"

        func run() async throws {
            let configuration = try LinkConfiguration.load()
            var providers = configuration.allowedProviders
            for text in allowProvider {
                providers.append(try LinkConfiguration.allowedProvider(text) { ValidationError("--allow-provider: \($0)") })
            }
            let schemes = Set([Self.defaultScheme] + scheme.map { $0.lowercased() } + configuration.schemes)
            let link = try DeepLink.parse(url, schemes: schemes)
            Terminal.note("This link asks to \(Self.describe(link)).")
            Terminal.note("  provider: \(TextOutput.field(link.provider.absoluteString))")
            guard link.isAllowed(by: providers) else {
                throw CommandFailure(
                    "\(link.provider.absoluteString) is not an allowed provider (--allow-provider, or allow-provider in \(LinkConfiguration.path.path)); nothing was sent to it"
                )
            }
            guard yes || Terminal.isInteractive else {
                throw ValidationError("stdin is not a terminal: pass --yes to act on the link without being asked")
            }
            guard let host = link.provider.host else { throw CommandFailure("the link names no provider host") }
            switch link.kind {
            case .bind: try await bind(link, host: host)
            case .authenticate: try await authenticate(link, host: host)
            case .deviceApproval: try await approve(link, host: host)
            case .transfer: try await receive(link, host: host)
            }
        }

        /// The link in plain words (its values are checked identifiers, safe to show).
        static func describe(_ link: DeepLink) -> String {
            switch link.kind {
            case .bind: "add a new passkey credential, on this computer, to an account at this provider"
            case .authenticate: "sign in at this provider, for the app that started the sign-in"
            case .deviceApproval: "approve another device's sign-in with the code \(link.userCode ?? "?")"
            case .transfer: "receive a credential from another device, with the code \(link.transferCode ?? "?")"
            }
        }

        /// Asks, unless `--yes`.
        func confirm(_ question: String) -> Bool {
            yes || Terminal.confirm(question + " [y/N] ")
        }

        func bind(_ link: DeepLink, host: String) async throws {
            let embedded = try store.embedded(allowing: [host])
            let yes = yes
            let bound = try await embedded.registerCredential(from: link.url) { request in
                Terminal.note("  account:  \(TextOutput.field(request.userName)) (\(TextOutput.field(request.userDisplayName)))")
                Terminal.note("  for:      \(TextOutput.field(request.relyingPartyName)) (\(TextOutput.field(request.relyingPartyID)))")
                return yes || Terminal.confirm("Add a passkey for this account? [y/N] ")
            }
            if store.json { return try JSONOutput.print(CredentialOutput(bound.credential)) }
            TextOutput.line("Bound credential \(bound.credential.id) for \(TextOutput.field(bound.credential.user.name)) at \(TextOutput.field(bound.credential.issuer?.absoluteString ?? bound.credential.rpID))")
        }

        func authenticate(_ link: DeepLink, host: String) async throws {
            let embedded = try store.embedded(allowing: [host])
            let held = try await embedded.credentials().filter { $0.issuer?.host == host }
            Terminal.note("  account:  \(held.isEmpty ? "none held here for this provider" : held.map { TextOutput.field($0.user.name) }.joined(separator: ", "))")
            guard confirm("Sign in?") else { throw CommandFailure("not signed in: declined") }
            let redirect = try await embedded.authenticate(url: link.url, credential: credential)
            if store.json { return try JSONOutput.print(RedirectOutput(redirectURL: redirect.absoluteString)) }
            TextOutput.line("Signed in. The app that asked gets: \(TextOutput.field(redirect.absoluteString, maximumLength: 4096))")
        }

        func approve(_ link: DeepLink, host: String) async throws {
            let embedded = try store.embedded(allowing: [host])
            let yes = yes
            let decided = try await embedded.approveDevice(issuer: link.provider, userCode: link.userCode ?? "", credential: credential) { request in
                DeviceDecisionOptions.show(request)
                return yes || Terminal.confirm("Approve this sign-in? [y/N] ")
            }
            if store.json { return try JSONOutput.print(DeviceDecisionOutput(userCode: link.userCode ?? "", decision: decided ? "approve" : "none")) }
            TextOutput.line(decided ? "Approved: the device is signed in." : "Nothing decided.")
        }

        func receive(_ link: DeepLink, host: String) async throws {
            guard confirm("Receive a credential with this code? The other device shows this device's key fingerprint to approve.") else {
                throw CommandFailure("nothing received: declined")
            }
            try await Import.receive(
                code: link.transferCode ?? "", deviceName: deviceName, issuer: link.provider, embedded: try store.embedded(allowing: [host]), json: store.json
            )
        }
    }
}
