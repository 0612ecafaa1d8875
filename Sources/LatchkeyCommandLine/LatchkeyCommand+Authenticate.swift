import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey
import LatchkeyOAuth

extension LatchkeyCommand {
    /// Options of `authorize` and `authenticate --issuer`.
    struct ClientOptions: ParsableArguments {
        /// The provider's built-in public client.
        static let defaultClientID = "latchkey-cli"

        @Option(help: ArgumentHelp("The OAuth client id.", valueName: "id"))
        var clientID = defaultClientID

        @Option(help: ArgumentHelp("The redirect URI registered for the client.", valueName: "uri"))
        var redirectURI = "http://127.0.0.1/callback"

        @Option(name: .customLong("scope"), help: ArgumentHelp("A scope to request (repeatable; default: openid profile, none for --client-credentials).", valueName: "scope"))
        var scope: [String] = []

        /// The scopes a person's sign-in asks for.
        var scopes: [String] { scope.isEmpty ? ["openid", "profile"] : scope }

        @Option(parsing: .unconditional, help: ArgumentHelp("The credential to sign with, when several fit (an id may start with '-').", valueName: "id"))
        var credential: String?

        @Option(help: ArgumentHelp("How to sign in: auto (the provider's authorization challenge endpoint when it has one, else redirect), challenge (draft-ietf-oauth-first-party-apps only) or redirect (/authorize and the authenticate URL).", valueName: "auto|challenge|redirect"))
        var flow: FlowChoice = .auto

        enum FlowChoice: String, ExpressibleByArgument, CaseIterable {
            case auto, challenge, redirect

            var setting: SignInFlow {
                switch self {
                case .auto: .automatic
                case .challenge: .challenge
                case .redirect: .redirect
                }
            }
        }

        func redirect() throws -> URL {
            guard let url = URL(string: redirectURI), url.scheme != nil else { throw ValidationError("--redirect-uri \(redirectURI) is not a URL") }
            return url
        }

        static func issuer(_ text: String) throws -> (URL, String) {
            guard let url = URL(string: text), url.scheme != nil, let host = url.host, !host.isEmpty else {
                throw ValidationError("--issuer \(text) is not an absolute URL")
            }
            return (url, host)
        }
    }

    /// `latchkey authorize`: signs in and prints the authorization code with its PKCE
    /// verifier, for a back end that exchanges it.
    struct Authorize: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "authorize", abstract: "Sign in and print the authorization code and PKCE verifier.")

        @Option(help: ArgumentHelp("The identity provider (issuer) URL.", valueName: "url"))
        var issuer: String

        @OptionGroup var client: ClientOptions
        @OptionGroup var store: StoreOptions
        @OptionGroup var answers: StepAnswers

        func run() async throws {
            let (issuerURL, host) = try ClientOptions.issuer(issuer)
            let embedded = try store.embedded(allowing: [host], answers: answers)
            let result = try await embedded.authorize(
                issuer: issuerURL, clientID: client.clientID, redirectURI: try client.redirect(), scopes: client.scopes, credential: client.credential
            )
            if store.json { return try JSONOutput.print(AuthorizationOutput(result)) }
            TextOutput.line("Code: \(result.code)\nState: \(result.state)\nCode verifier: \(result.codeVerifier)\nRedirect URI: \(result.redirectURI.absoluteString)\nNonce: \(result.nonce)")
        }
    }

    /// `latchkey authenticate --issuer URL` (sign in, exchange the code, validate the ID
    /// token) or `latchkey authenticate <authenticate-url>` (answer a URL from elsewhere).
    struct Authenticate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "authenticate",
            abstract: "Sign in: with --issuer, get validated tokens; with an authenticate URL, print the redirect carrying the code."
        )

        @Argument(help: "An authenticate URL (https://…/v1/authenticate/… or <scheme>://authenticate?…).")
        var url: String?

        @Option(help: ArgumentHelp("The identity provider (issuer) URL.", valueName: "url"))
        var issuer: String?

        @Flag(help: "Ask for tokens bound to the credential's DPoP key (RFC 9449); refused if the provider issues bearer tokens.")
        var dpop = false

        @OptionGroup var client: ClientOptions
        @OptionGroup var store: StoreOptions
        @OptionGroup var answers: StepAnswers

        func validate() throws {
            guard (url == nil) != (issuer == nil) else {
                throw ValidationError("give either --issuer or an authenticate URL")
            }
            if dpop, url != nil {
                throw ValidationError("--dpop goes with --issuer: an authenticate URL ends at the code, whose exchange is someone else's")
            }
        }

        func run() async throws {
            if let url {
                guard let link = URL(string: url), let provider = Embedded.provider(of: link), let host = provider.host else {
                    throw ValidationError("\(url) is not an authenticate URL")
                }
                let redirect = try await store.embedded(allowing: [host], answers: answers).authenticate(url: link, credential: client.credential)
                if store.json { return try JSONOutput.print(RedirectOutput(redirectURL: redirect.absoluteString)) }
                return TextOutput.line("Redirect: \(TextOutput.field(redirect.absoluteString, maximumLength: 4096))")
            }
            let (issuerURL, host) = try ClientOptions.issuer(issuer ?? "")
            let embedded = try store.embedded(allowing: [host], answers: answers, signInFlow: client.flow.setting)
            let tokens = try await embedded.authenticate(
                issuer: issuerURL, clientID: client.clientID, redirectURI: try client.redirect(), scopes: client.scopes, credential: client.credential,
                proofOfPossession: dpop ? .dpop : ProofOfPossession.none
            )
            if store.json { return try JSONOutput.print(TokensOutput(tokens)) }
            TextOutput.line("Signed in at \(TextOutput.field(tokens.issuer.absoluteString)) as \(TextOutput.field(tokens.claims?.subject ?? "?"))")
            TextOutput.line("Token type: \(TextOutput.field(tokens.tokenType))\(tokens.dpop.map { " (bound to DPoP key \($0.thumbprint))" } ?? "")")
            if let expiresAt = tokens.expiresAt { TextOutput.line("Access token expires \(expiresAt.formatted(.iso8601)) (use --json to print the tokens)") }
            if let claims = tokens.claims?.all {
                TextOutput.line("ID token claims:")
                try JSONOutput.print(claims)
            }
        }
    }
}
