import Foundation
import LatchkeyOAuth
import Hummingbird
import Latchkey
import LatchkeyTestSupport
import Testing
import LatchkeyProtocol

/// Untrusted text on its way to a terminal (docs/SECURITY.md, "What the terminal shows"):
/// the `latchkey` binary against a provider that puts terminal escapes and bidi controls
/// in what it says, in-process on Hummingbird.
extension HostileInputSuite {
    /// An OSC title change, a screen clear, a CSI in its C1 form, DEL, a right-to-left
    /// override, an isolate and a zero-width joiner, and a line break to forge a line.
    static let hostileText = "ada\u{1B}]0;pwned\u{07}\u{1B}[2J\u{9B}31m\u{7F}\u{202E}live\u{2066}x\u{200D}\nBound credential forged"

    /// Whether `text` holds anything a terminal would act on (its own line breaks aside).
    static func unsafeOnTerminal(_ text: String) -> [Unicode.Scalar] {
        text.unicodeScalars.filter { $0 != "\n" && $0.isUnsafeOnTerminal }
    }

    /// A bind provider whose creation options name the user `hostileText` and whose
    /// confirmation carries it in `postBindingRedirectURI`; `refuse` answers 400 with it.
    static func withHostileBindServer(_ body: @escaping @Sendable (URL) async throws -> Void) async throws {
        let router = Router()
        router.get("v1/bind/job") { request, _ in
            let base = "http://\(request.head.authority ?? "")"
            let options: JSONValue = [
                "publicKey": [
                    "rp": ["id": "127.0.0.1", "name": "Hostile"],
                    "user": ["id": "dXNlcg", "name": .string(hostileText), "displayName": .string(hostileText)],
                    "challenge": "Y2hhbGxlbmdlLWNoYWxsZW5nZS1jaGFsbGVuZ2UtMzI",
                    "pubKeyCredParams": [["type": "public-key", "alg": -7]],
                ],
                "submit": "\(base)/v1/bind/job",
            ]
            return try HostileProviderTests.json(String(decoding: options.json(), as: UTF8.self))
        }
        router.post("v1/bind/job") { request, _ in
            let posted = try await request.body.collect(upTo: 64 * 1024)
            let id = (try? JSONValue(json: Data(posted.readableBytesView)))?["id"]?.stringValue ?? ""
            let answer: JSONValue = ["credential": ["id": .string(id)], "postBindingRedirectURI": "https://app.example/\u{1B}[2Jdone\u{202E}"]
            return try HostileProviderTests.json(String(decoding: answer.json(), as: UTF8.self), status: .created)
        }
        router.get("v1/bind/refuse") { _, _ in
            let answer: JSONValue = ["error": "access_denied", "error_description": .string(hostileText)]
            return try HostileProviderTests.json(String(decoding: answer.json(), as: UTF8.self), status: .badRequest)
        }
        try await LiveServer.run(router, label: "hostile-terminal-provider", body)
    }

    @Test("escapes in user.name and a redirect reach neither bind's nor list's output; list --json keeps them exact, escaped")
    func escapesInBindAndList() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary.path), "latchkey is built with the tests")
        let vault = try TemporaryVault()
        defer { vault.cleanUp() }
        let environment = Self.cliEnvironment(vault)
        try await Self.withHostileBindServer { base in
            let bind = try await CommandLineTests.latchkey(["bind", "\(base.absoluteString)/v1/bind/job?token=t"], environment: environment)
            #expect(bind.status == 0, "\(bind.stderr)")
            #expect(Self.unsafeOnTerminal(bind.stdout + bind.stderr).isEmpty, "bind printed \(Self.unsafeOnTerminal(bind.stdout + bind.stderr))")
            #expect(!bind.stdout.contains("\nBound credential forged"), "a provider value forged a line of its own")

            let list = try await CommandLineTests.latchkey(["list"], environment: environment)
            #expect(list.status == 0, "\(list.stderr)")
            #expect(list.stdout.contains("ada"))
            #expect(Self.unsafeOnTerminal(list.stdout + list.stderr).isEmpty, "list printed \(Self.unsafeOnTerminal(list.stdout))")

            let json = try await CommandLineTests.latchkey(["list", "--json"], environment: environment)
            #expect(Self.unsafeOnTerminal(json.stdout).isEmpty, "list --json printed \(Self.unsafeOnTerminal(json.stdout)) raw")
            let listed = try #require(try CommandLineTests.object(json.stdout)["credentials"]?.arrayValue, "\(json.stdout)")
            let names = listed.compactMap { ($0["user"])?["name"]?.stringValue }
            #expect(names == [Self.hostileText], "--json must keep the value exact: \(json.stdout)")
        }
    }

    @Test("a provider's error_description with escapes reaches stderr neutralised")
    func escapesInProviderError() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary.path), "latchkey is built with the tests")
        let vault = try TemporaryVault()
        defer { vault.cleanUp() }
        let environment = Self.cliEnvironment(vault)
        try await Self.withHostileBindServer { base in
            let bind = try await CommandLineTests.latchkey(["bind", "\(base.absoluteString)/v1/bind/refuse?token=t"], environment: environment)
            #expect(bind.status == 1)
            #expect(bind.stderr.contains("the provider refused"), "\(bind.stderr)")
            #expect(Self.unsafeOnTerminal(bind.stdout + bind.stderr).isEmpty, "bind printed \(Self.unsafeOnTerminal(bind.stderr))")
        }
    }

    @Test("escapes in an ID token's sub, /token's error_description and a redirect's error_description reach no terminal", arguments: [
        HostileOIDCProvider.Lie.subject, .tokenError, .redirectError,
    ])
    func escapesInSignIn(_ lie: HostileOIDCProvider.Lie) async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary.path), "latchkey is built with the tests")
        let vault = try TemporaryVault()
        defer { vault.cleanUp() }
        let environment = Self.cliEnvironment(vault)
        try await HostileOIDCProvider.run(lie) { base in
            let bind = try await CommandLineTests.latchkey(["bind", "\(base.absoluteString)/v1/bind/job?token=t"], environment: environment)
            try #require(bind.status == 0, "\(bind.stderr)")
            let signIn = try await CommandLineTests.latchkey(["authenticate", "--issuer", base.absoluteString], environment: environment)
            #expect(signIn.status == (lie == .subject ? 0 : 1), "\(lie): \(signIn.stdout) \(signIn.stderr)")
            #expect(Self.unsafeOnTerminal(signIn.stdout + signIn.stderr).isEmpty, "\(lie): printed \(Self.unsafeOnTerminal(signIn.stdout + signIn.stderr))")
            #expect((signIn.stdout + signIn.stderr).contains("ada"), "\(lie): the text is shown, made safe: \(signIn.stdout) \(signIn.stderr)")
            #expect(!(signIn.stdout + signIn.stderr).contains("\nBound credential forged"), "\(lie): a provider value forged a line")
            if lie == .subject {
                let json = try await CommandLineTests.latchkey(["authenticate", "--issuer", base.absoluteString, "--json"], environment: environment)
                #expect(json.status == 0, "\(json.stderr)")
                #expect(Self.unsafeOnTerminal(json.stdout).isEmpty, "--json printed \(Self.unsafeOnTerminal(json.stdout)) raw")
                #expect(json.stdout.contains("\\u001b") && json.stdout.lowercased().contains("\\u202e"), "--json keeps the subject, escaped: \(json.stdout)")
            }
        }
    }
}
