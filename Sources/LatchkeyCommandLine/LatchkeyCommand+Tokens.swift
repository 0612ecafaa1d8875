import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import Latchkey
import LatchkeyOAuth
#if canImport(Glibc)
import Glibc
#endif

extension LatchkeyCommand {
    /// Options of the commands that use kept tokens: the issuer and client, and whether
    /// the tokens must be DPoP-bound.
    struct TokenOptions: ParsableArguments {
        @Option(help: ArgumentHelp("The identity provider (issuer) URL. (latchkey api: or --allow-provider instead.)", valueName: "url"))
        var issuer: String?

        @Flag(help: "Use tokens bound to the credential's DPoP key (RFC 9449); a sign-in, when one is needed, asks for them.")
        var dpop = false

        @Flag(help: "The client's own tokens (RFC 6749 §4.4), authenticated with its client key (see `latchkey client-key`), instead of a person's sign-in.")
        var clientCredentials = false

        @Option(help: ArgumentHelp("With --client-credentials: the client assertion's aud, the provider's issuer identifier (default, per draft-ietf-oauth-rfc7523bis) or its token endpoint URL (for providers that still demand it).", valueName: "issuer|token-endpoint"))
        var assertionAudience: AssertionAudience?

        @OptionGroup var client: ClientOptions

        enum AssertionAudience: String, ExpressibleByArgument, CaseIterable {
            case issuer
            case tokenEndpoint = "token-endpoint"
        }

        /// `--issuer`, which every command but `latchkey api --allow-provider` needs.
        func requiredIssuer() throws -> (URL, String) {
            guard let issuer else { throw ValidationError("--issuer is required: the identity provider (issuer) URL") }
            return try ClientOptions.issuer(issuer)
        }

        func validate() throws {
            if !clientCredentials {
                guard assertionAudience == nil else { throw ValidationError("--assertion-audience goes with --client-credentials") }
            } else {
                guard client.credential == nil else { throw ValidationError("--credential names a person's credential; --client-credentials signs with the client key") }
                guard client.clientID != ClientOptions.defaultClientID else { throw ValidationError("--client-credentials needs --client-id: the client registered with your client key") }
            }
        }

        /// Valid tokens: kept ones, refreshed ones, or a new sign-in (for a client, a new
        /// client credentials grant), in that order; never `rejected` again.
        func validTokens(_ embedded: Embedded, issuer: URL, rejected: Tokens? = nil) async throws -> Tokens {
            if clientCredentials {
                return try await embedded.clientCredentials(
                    issuer: issuer, clientID: client.clientID, scopes: client.scope.isEmpty ? nil : client.scope,
                    audience: assertionAudience == .tokenEndpoint ? .tokenEndpoint : .issuer, dpop: dpop, rejected: rejected
                )
            }
            return try await embedded.validTokens(
                issuer: issuer, clientID: client.clientID, redirectURI: try client.redirect(), scopes: client.scopes,
                credential: client.credential, proofOfPossession: dpop ? .dpop : nil, rejected: rejected
            )
        }
    }

    /// `latchkey token --issuer URL`: prints a valid access token, from the vault's token
    /// cache when it can (`gcloud auth print-access-token` style).
    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "token",
            abstract: "Print a valid access token: kept in the vault, refreshed, or from a new sign-in, in that order."
        )

        @OptionGroup var tokens: TokenOptions
        @OptionGroup var store: StoreOptions
        @OptionGroup var answers: StepAnswers

        func validate() throws {
            _ = try tokens.requiredIssuer()
        }

        func run() async throws {
            let (issuerURL, host) = try tokens.requiredIssuer()
            let embedded = try store.embedded(allowing: [host], answers: answers, signInFlow: tokens.client.flow.setting)
            let result = try await tokens.validTokens(embedded, issuer: issuerURL)
            if store.json { return try JSONOutput.print(TokensOutput(result)) }
            TextOutput.line(result.accessToken)
        }
    }

    /// `latchkey api URL --issuer X`: calls a resource with a kept token (`gh api` style),
    /// only at the issuer's origin or one given with `--resource-origin`
    /// (docs/SECURITY.md, "Where tokens go").
    ///
    /// `latchkey api URL --allow-provider X`: the resource says where its tokens come
    /// from (RFC 9728, as MCP servers do), and a token for it alone (RFC 8707) is asked of
    /// that provider only if it is one allowed here (`Embedded.send(_:to:)`).
    struct API: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "api",
            abstract: "Call an HTTP API with a valid access token (DPoP-signed when the token is bound). The body goes to stdout; exit 0 for 2xx."
        )

        @Argument(help: "The URL to call (https, or http to a loopback host).")
        var url: String

        @Option(name: [.customShort("X"), .long], help: ArgumentHelp("The HTTP method (default: GET, or POST with --data).", valueName: "method"))
        var method: String?

        @Option(help: ArgumentHelp("The request body: text, @file, or - for stdin (at most 16 MiB).", valueName: "data"))
        var data: String?

        @Option(name: [.customShort("H"), .customLong("header")], help: ArgumentHelp("A request header \"Name: value\" (repeatable).", valueName: "header"))
        var headers: [String] = []

        @Option(name: .customLong("resource-origin"), help: ArgumentHelp("An origin besides the issuer's that the token may be sent to, https://host[:port] (repeatable). Any other URL is refused before a request is made.", valueName: "origin"))
        var resourceOrigins: [String] = []

        @Option(name: .customLong("allow-provider"), help: ArgumentHelp("Instead of --issuer: an identity provider (issuer URL) you trust to sign you in for resources that name it (repeatable). On a 401 naming the resource's metadata (RFC 9728), a token for that resource alone is asked of the first provider it names that is allowed here; one it names that is not allowed is never contacted.", valueName: "url"))
        var allowedProviders: [String] = []

        @OptionGroup var tokens: TokenOptions
        @OptionGroup var store: StoreOptions
        @OptionGroup var answers: StepAnswers

        /// The largest request body read and response body accepted.
        static let maximumBodySize = 16 << 20

        func validate() throws {
            if let method {
                guard (1...32).contains(method.utf8.count), method.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
                    throw ValidationError("--method is 1 to 32 capital letters (GET, POST, …)")
                }
            }
            _ = try Self.parseHeaders(headers)
            _ = try allowedOrigins()
            if allowedProviders.isEmpty {
                _ = try tokens.requiredIssuer()
            } else {
                guard tokens.issuer == nil, resourceOrigins.isEmpty else {
                    throw ValidationError("--allow-provider finds the provider from the resource (RFC 9728): it goes without --issuer and --resource-origin")
                }
                guard !tokens.clientCredentials else { throw ValidationError("--allow-provider signs you in; it goes without --client-credentials") }
                _ = try providers()
            }
        }

        /// `--allow-provider`s, parsed: issuer URLs and their hosts.
        func providers() throws -> [(url: URL, host: String)] {
            try allowedProviders.map { text in
                guard let url = URL(string: text), url.scheme != nil, let host = url.host, !host.isEmpty else {
                    throw ValidationError("--allow-provider \(TextOutput.field(text, maximumLength: 160)) is not an absolute URL")
                }
                return (url, host)
            }
        }

        /// `--resource-origin`s, parsed.
        func allowedOrigins() throws -> [WebOrigin] {
            try resourceOrigins.map { text in
                do {
                    return try WebOrigin(parsing: text)
                } catch let error as OAuthError {
                    throw ValidationError("--resource-origin: \(error.reason)")
                }
            }
        }

        func run() async throws {
            guard let target = URL(string: url), let scheme = target.scheme?.lowercased(), ["http", "https"].contains(scheme), target.host != nil else {
                throw ValidationError("\(url) is not an http(s) URL")
            }
            do {
                try TransportPolicy.check(target)
            } catch let error as OAuthError {
                throw CommandFailure(error.reason)
            }
            if !allowedProviders.isEmpty { return try await runFollowingResource(target) }
            let (issuerURL, host) = try tokens.requiredIssuer()
            // Before any request (a sign-in included): the token goes to the issuer's
            // origin and the ones the user named, nowhere else.
            let allowed = Set(try allowedOrigins() + [WebOrigin(issuerURL)].compactMap { $0 })
            do {
                try AccessTokenTransport.check(target, allowedOrigins: allowed)
            } catch let error as OAuthError {
                throw CommandFailure("\(error.reason); to send it there, add --resource-origin \(WebOrigin(target)?.description ?? "ORIGIN")")
            }
            let request = try request(to: target)
            let embedded = try store.embedded(allowing: [host], answers: answers, signInFlow: tokens.client.flow.setting)
            var policy = TransportPolicy()
            policy.maximumResponseSize = Self.maximumBodySize
            let inner = HTTP1Transport(policy: policy)
            var valid = try await tokens.validTokens(embedded, issuer: issuerURL)
            var response = try await Self.send(request, with: valid, through: inner, target: target, allowed: allowed)
            // Refused although kept as valid (revoked at the provider, or a provider that
            // forgot it): once more with refreshed or new tokens (RFC 6750 §3.1).
            if AuthenticationChallenge.refusesToken(response) {
                valid = try await tokens.validTokens(embedded, issuer: issuerURL, rejected: valid)
                response = try await Self.send(request, with: valid, through: inner, target: target, allowed: allowed)
            }

            try finish(response, target: target)
        }

        /// The request as given, with the body and headers of the options.
        func request(to target: URL) throws -> TransportRequest {
            let body = try data.map(Self.readBody)
            var requestHeaders = try Self.parseHeaders(headers)
            if body != nil, !requestHeaders.keys.contains(where: { $0.lowercased() == "content-type" }) {
                requestHeaders["Content-Type"] = "application/json"
            }
            return TransportRequest(method: method ?? (body == nil ? "GET" : "POST"), url: target, headers: requestHeaders, body: body)
        }

        /// `--allow-provider`: RFC 9728 through `Embedded.send(_:to:)`.
        func runFollowingResource(_ target: URL) async throws {
            let providers = try providers()
            let embedded = try store.embedded(allowing: providers.map(\.host), answers: answers, signInFlow: tokens.client.flow.setting)
            var policy = TransportPolicy()
            policy.maximumResponseSize = Self.maximumBodySize
            let access = ProtectedResourceAccess(
                allowedProviders: providers.map(\.url), clientID: tokens.client.clientID, redirectURI: try tokens.client.redirect(),
                scopes: tokens.client.scopes, credential: tokens.client.credential, proofOfPossession: tokens.dpop ? .dpop : nil,
                transport: HTTP1Transport(policy: policy)
            )
            let answer: ProtectedResourceResponse
            do {
                answer = try await embedded.send(try request(to: target), to: access)
            } catch let error as LatchkeyError {
                throw CommandFailure("\(target.absoluteString): \(error.reason)")
            }
            try finish(answer.response, target: target)
        }

        /// The answer to stdout (or as JSON); exit 1 for anything but 2xx.
        func finish(_ response: TransportResponse, target: URL) throws {
            if store.json {
                try JSONOutput.print(APIResponseOutput(response))
            } else {
                Self.writeBody(response.body)
            }
            guard (200..<300).contains(response.status) else {
                TextOutput.error("latchkey: \(TextOutput.field(target.absoluteString)) answered HTTP \(response.status)")
                throw ExitCode(1)
            }
        }

        static func send(_ request: TransportRequest, with tokens: Tokens, through inner: any HTTPTransport, target: URL, allowed: Set<WebOrigin>) async throws -> TransportResponse {
            do {
                return try await AccessTokenTransport(inner: inner, accessToken: tokens.accessToken, dpop: tokens.dpop, allowedOrigins: allowed).send(request)
            } catch let error as OAuthError {
                throw CommandFailure("\(target.absoluteString): \(error.reason)")
            }
        }

        /// `Name: value` pairs. Authorization and DPoP are the command's own; Host and
        /// Content-Length are the transport's. Names are RFC 9110 §5.6.2 tokens and values
        /// printable ASCII (no line break or control character), so no header can smuggle
        /// another.
        static func parseHeaders(_ lines: [String]) throws -> [String: String] {
            var parsed: [String: String] = [:]
            let tokenCharacters = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
            for line in lines {
                guard let colon = line.firstIndex(of: ":") else { throw ValidationError("--header \"Name: value\" lacks its ':'") }
                let name = String(line[..<colon])
                let value = line[line.index(after: colon)...].trimmingSpaces()
                guard !name.isEmpty, name.utf8.count <= 256, name.utf8.allSatisfy(tokenCharacters.contains) else {
                    throw ValidationError("--header name \(TextOutput.field(name, maximumLength: 64)) is not an HTTP field name")
                }
                guard value.utf8.count <= 8192, value.utf8.allSatisfy({ $0 == 0x09 || (0x20...0x7E).contains($0) }) else {
                    throw ValidationError("--header \(name)'s value is not printable ASCII or is over 8 KiB")
                }
                guard !["authorization", "dpop", "host", "content-length"].contains(name.lowercased()) else {
                    throw ValidationError("--header \(name) is set by latchkey itself")
                }
                parsed[name] = value
            }
            return parsed
        }

        /// `--data`: literal text, `@file`, or `-` for stdin, at most ``maximumBodySize``.
        static func readBody(_ argument: String) throws -> Data {
            let data: Data
            if argument == "-" {
                guard let read = FileDescriptorIO.read(STDIN_FILENO, upTo: maximumBodySize + 1) else { throw CommandFailure("cannot read --data from standard input") }
                data = read
            } else if argument.hasPrefix("@") {
                let path = String(argument.dropFirst())
                guard let read = FileDescriptorIO.read(path: path, upTo: maximumBodySize + 1) else { throw CommandFailure("cannot read --data file \(path)") }
                data = read
            } else {
                data = Data(argument.utf8)
            }
            guard data.count <= maximumBodySize else { throw CommandFailure("--data is over 16 MiB") }
            return data
        }

        /// The body as it came to a pipe or file; to a terminal, as text made safe to
        /// show (docs/SECURITY.md, "What the terminal shows"): a server's bytes must not
        /// drive the user's terminal.
        static func writeBody(_ body: Data) {
            guard isatty(STDOUT_FILENO) == 1 else {
                FileDescriptorIO.write(STDOUT_FILENO, body)
                return
            }
            guard !body.isEmpty else { return }
            TextOutput.line(String(decoding: body, as: UTF8.self))
        }
    }

    /// `latchkey logout --issuer X`: revokes the kept tokens (RFC 7009) and forgets them.
    struct Logout: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "logout", abstract: "Revoke the tokens kept for a provider (RFC 7009) and forget them.")

        @Option(help: ArgumentHelp("The identity provider (issuer) URL.", valueName: "url"))
        var issuer: String

        @Option(help: ArgumentHelp("Only this OAuth client's tokens.", valueName: "id"))
        var clientID: String?

        @Option(parsing: .unconditional, help: ArgumentHelp("Only this credential's tokens (an id may start with '-').", valueName: "id"))
        var credential: String?

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let (issuerURL, host) = try ClientOptions.issuer(issuer)
            let embedded = try store.embedded(allowing: [host])
            let result = try await embedded.logout(issuer: issuerURL, clientID: clientID, credential: credential)
            if store.json {
                try JSONOutput.print(LogoutOutput(forgotten: result.forgotten, revocationFailures: result.revocationFailures.map(\.reason)))
            } else {
                TextOutput.line("Signed out of \(TextOutput.field(issuerURL.absoluteString)): \(result.forgotten) kept sign-in(s) forgotten")
                for failure in result.revocationFailures {
                    TextOutput.error("latchkey: not revoked at the provider (forgotten here all the same): \(TextOutput.field(failure.reason))")
                }
            }
            if !result.revocationFailures.isEmpty { throw ExitCode(1) }
        }
    }
}
