import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey
import LatchkeyOAuth

extension LatchkeyCommand {
    /// `latchkey login --device --issuer URL`: signs a person in on this headless host by
    /// the device authorization grant (RFC 8628), against any provider that offers it.
    struct Login: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "login",
            abstract: "Sign in on this host by approving a code elsewhere (RFC 8628 device grant): shows a code and a QR code, waits for the approval, keeps the tokens."
        )

        @Flag(help: "Sign in by device code (the only way `login` signs in; `authenticate` signs in with a credential on this host).")
        var device = false

        @Option(help: ArgumentHelp("The identity provider (issuer) URL.", valueName: "url"))
        var issuer: String

        @Option(help: ArgumentHelp("The OAuth client id (default: latchkey-cli). A client key made with `latchkey client-key` for it authenticates the client.", valueName: "id"))
        var clientID = ClientOptions.defaultClientID

        @Option(name: .customLong("scope"), help: ArgumentHelp("A scope to request (repeatable; default: openid profile).", valueName: "scope"))
        var scope: [String] = []

        @Flag(help: "Bind the tokens to a DPoP key kept in the vault (RFC 9449).")
        var dpop = false

        @Flag(inversion: .prefixedNo, help: "Draw verification_uri_complete as a QR code on stderr (default: on a terminal).")
        var qr: Bool?

        @OptionGroup var store: StoreOptions

        func validate() throws {
            guard device else { throw ValidationError("latchkey login signs in by device code: add --device (or use `latchkey authenticate` with a credential on this host)") }
        }

        func run() async throws {
            let (issuerURL, host) = try ClientOptions.issuer(issuer)
            let embedded = try store.embedded(allowing: [host])
            let drawQR = qr ?? Terminal.isInteractive
            let scopes = scope.isEmpty ? [OAuthScope.openID, OAuthScope.profile] : scope
            for try await event in embedded.deviceAuthorization(issuer: issuerURL, clientID: clientID, scopes: scopes, dpop: dpop) {
                switch event {
                case .code(let prompt):
                    if store.json { try JSONOutput.printLine(DeviceCodeOutput(prompt)) }
                    // The provider's text, made safe to show: it must not drive the terminal.
                    Terminal.note("To sign in, approve code \(TextOutput.field(prompt.userCode, maximumLength: 64)) at \(TextOutput.field(prompt.verificationURI.absoluteString))")
                    Terminal.note("  (or on a device signed in there: latchkey approve \(TextOutput.field(prompt.userCode, maximumLength: 64)) --issuer \(issuerURL.absoluteString))")
                    if drawQR, let complete = prompt.verificationURIComplete, let code = try? QRCode(text: complete.absoluteString) {
                        Terminal.note(code.rendered())
                    }
                    Terminal.note("Waiting for approval (the code expires at \(Export.time(prompt.expiresAt)))…")
                case .pending:
                    break
                case .slowDown(let interval):
                    if store.json { try JSONOutput.printLine(DeviceSlowDownOutput(interval: interval)) }
                    Terminal.note("The provider asked to poll more slowly: every \(interval) s now.")
                case .signedIn(let tokens):
                    if store.json { return try JSONOutput.printLine(TokensOutput(tokens)) }
                    let who = tokens.claims?.all["preferred_username"]?.stringValue ?? tokens.claims?.subject ?? "?"
                    TextOutput.line("Signed in at \(TextOutput.field(issuerURL.absoluteString)) as \(TextOutput.field(who)) (\(tokens.tokenType) tokens kept in the vault)")
                }
            }
        }
    }

    /// `latchkey approve USER_CODE --issuer URL`: approves a device's sign-in with a
    /// credential held here (docs/PROTOCOL.md section 7), after showing what it asks.
    struct Approve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "approve",
            abstract: "Approve another device's sign-in (its user code) with a credential held here, after showing what it asks for."
        )

        @Argument(help: "The user code the other device shows (XXXX-XXXX).")
        var userCode: String

        @OptionGroup var decision: DeviceDecisionOptions

        func run() async throws {
            try await decision.decide(userCode, .approve)
        }
    }

    /// `latchkey deny USER_CODE --issuer URL`: denies it, signed the same way, so a
    /// stranger who guessed a code cannot deny other people's sign-ins.
    struct Deny: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "deny", abstract: "Deny another device's sign-in (its user code), signed with a credential held here.")

        @Argument(help: "The user code the other device shows (XXXX-XXXX).")
        var userCode: String

        @OptionGroup var decision: DeviceDecisionOptions

        func run() async throws {
            try await decision.decide(userCode, .deny)
        }
    }

    /// What `approve` and `deny` share.
    struct DeviceDecisionOptions: ParsableArguments {
        @Option(help: ArgumentHelp("The identity provider (issuer) URL.", valueName: "url"))
        var issuer: String

        @Option(parsing: .unconditional, help: ArgumentHelp("The credential to sign with, when several fit (an id may start with '-').", valueName: "id"))
        var credential: String?

        @Flag(help: "Decide without asking (what is asked is still shown). Required when stdin is not a terminal.")
        var yes = false

        @OptionGroup var store: StoreOptions

        func decide(_ userCode: String, _ decision: DeviceDecision) async throws {
            guard yes || Terminal.isInteractive else {
                throw ValidationError("stdin is not a terminal: pass --yes to \(decision.rawValue) without being asked")
            }
            let (issuerURL, host) = try ClientOptions.issuer(issuer)
            let embedded = try store.embedded(allowing: [host])
            let json = store.json
            let yes = yes
            let decided = try await embedded.approveDevice(issuer: issuerURL, userCode: userCode, decision: decision, credential: credential) { request in
                Self.show(request)
                if yes { return true }
                return Terminal.confirm("\(decision == .approve ? "Approve" : "Deny") this sign-in? [y/N] ")
            }
            if json { return try JSONOutput.print(DeviceDecisionOutput(userCode: userCode, decision: decided ? decision.rawValue : "none")) }
            TextOutput.line(decided ? (decision == .approve ? "Approved: the device is signed in." : "Denied.") : "Nothing decided.")
        }

        /// On stderr, always (also with --yes): who asks, for what, from where and when —
        /// what a person needs to notice a code someone else started (docs/SECURITY.md,
        /// "Device-code phishing").
        static func show(_ request: DeviceApprovalRequest) {
            let when = request.requestedAt.map { $0.formatted(.iso8601) } ?? "?"
            Terminal.note("Device sign-in \(TextOutput.field(request.userCode, maximumLength: 64)):")
            Terminal.note("  client:   \(TextOutput.field(request.clientName)) (\(TextOutput.field(request.clientID)))")
            Terminal.note("  scope:    \(TextOutput.field(request.scopes.joined(separator: " ")))")
            Terminal.note("  asked by: \(TextOutput.field(request.requestedFrom)) at \(when)")
            if let login = request.hostLogin {
                Terminal.note("  a sign-in to the computer \(TextOutput.field(request.clientName)):")
                Terminal.note("    account: \(TextOutput.field(login.user))")
                Terminal.note("    service: \(TextOutput.field(login.service))")
                Terminal.note("    from:    \(login.remoteHost.map { TextOutput.field($0) } ?? "(the computer itself)")")
                Terminal.note("Approve only a sign-in you are making yourself, now.")
                return
            }
            Terminal.note("Approve only a code you started yourself, on a device in front of you.")
        }
    }
}
