import Foundation
import Hummingbird
import LatchkeyOAuth
import LatchkeyTestSupport
import Synchronization
import Testing

/// `latchkey client-key`, `admin create-client` and `token`/`api --client-credentials` as
/// processes against `latchkey serve` on loopback (issue 31: RFC 7523 `private_key_jwt`,
/// RFC 6749 §4.4).
@Suite("latchkey: client keys and client credentials as processes")
struct ClientCommandLineTests {

    @Test("client-key prints a JWK Set once made and the same after; create-client --jwks registers it; token --client-credentials is kept and reused per scope; api uses it; --delete")
    func clientCredentials() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary.path), "latchkey is built with the tests")
        let (server, issuer) = try await CommandLineTests.serve()
        defer { CommandLineTests.stop(server) }
        let scratch = try TemporaryDirectory()
        let environment = try CommandLineTests.vaultKeyEnvironment(scratch, "vault")
        let key = ["--issuer", issuer.absoluteString, "--client-id", "backup-job"]

        let made = try await LatchkeyCommand.run(["client-key"] + key, environment: environment)
        try #require(made.status == 0, "\(made.stderr)")
        #expect(made.stderr.contains("New client key"))
        let jwks = try CommandLineTests.object(made.stdout)
        let jwk = try #require(jwks["keys"]?.arrayValue?.first)
        #expect(jwk["kty"]?.stringValue == "EC" && jwk["crv"]?.stringValue == "P-256" && jwk["alg"]?.stringValue == "ES256" && jwk["use"]?.stringValue == "sig")
        #expect(jwk["d"] == nil, "no private member")
        let shown = try await LatchkeyCommand.run(["client-key", "--json"] + key, environment: environment)
        #expect(shown.status == 0, "\(shown.stderr)")
        let shownObject = try CommandLineTests.object(shown.stdout)
        #expect(shownObject["created"] == .bool(false))
        #expect(shownObject["keyID"]?.stringValue == jwk["kid"]?.stringValue && shownObject["jwks"] == jwks)

        let pem = try await LatchkeyCommand.run(["client-key", "--pem"] + key, environment: environment)
        #expect(pem.stdout.hasPrefix("-----BEGIN PUBLIC KEY-----\n") && pem.stdout.hasSuffix("-----END PUBLIC KEY-----\n"), "\(pem.stdout)")
        #expect(shownObject["publicKeyPEM"]?.stringValue == pem.stdout)

        // Not registered yet: the provider refuses the client.
        let unregistered = try await LatchkeyCommand.run(["token", "--client-credentials"] + key, environment: environment)
        #expect(unregistered.status == 1 && unregistered.stderr.contains("invalid_client"), "\(unregistered.stderr)")

        let jwksFile = scratch.url.appendingPathComponent("jwks.json")
        try Data(made.stdout.utf8).write(to: jwksFile)
        let registered = try await LatchkeyCommand.run(
            ["admin", "create-client", "--idp", issuer.absoluteString, "--client-id", "backup-job", "--jwks", jwksFile.path,
             "--grant", "client_credentials", "--scope", "jobs", "--scope", "reports", "--json"],
            environment: environment.merging(["LATCHKEY_ADMIN_TOKEN": CommandLineTests.adminToken]) { $1 }
        )
        try #require(registered.status == 0, "\(registered.stderr)")

        let first = try await LatchkeyCommand.run(["token", "--client-credentials", "--scope", "jobs", "--json"] + key, environment: environment)
        try #require(first.status == 0, "\(first.stderr)")
        let firstTokens = try CommandLineTests.object(first.stdout)
        #expect(firstTokens["tokenType"]?.stringValue == "Bearer" && firstTokens["idToken"] == nil && firstTokens["refreshToken"] == nil)
        let again = try await LatchkeyCommand.run(["token", "--client-credentials", "--scope", "jobs"] + key, environment: environment)
        #expect(again.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == firstTokens["accessToken"]?.stringValue, "kept and reused")
        let otherScope = try await LatchkeyCommand.run(["token", "--client-credentials", "--scope", "reports"] + key, environment: environment)
        #expect(otherScope.status == 0 && !otherScope.stdout.isEmpty && otherScope.stdout != again.stdout, "another scope set, another token")
        let tooMuch = try await LatchkeyCommand.run(["token", "--client-credentials", "--scope", "admin"] + key, environment: environment)
        #expect(tooMuch.status == 1 && tooMuch.stderr.contains("invalid_scope"), "\(tooMuch.stderr)")
        let tokenEndpoint = try await LatchkeyCommand.run(["token", "--client-credentials", "--assertion-audience", "token-endpoint"] + key, environment: environment)
        #expect(tokenEndpoint.status == 0, "aud = the token endpoint is accepted too: \(tokenEndpoint.stderr)")

        let bound = try await LatchkeyCommand.run(["token", "--client-credentials", "--scope", "jobs", "--dpop", "--json"] + key, environment: environment)
        try #require(bound.status == 0, "\(bound.stderr)")
        let boundTokens = try CommandLineTests.object(bound.stdout)
        #expect(boundTokens["tokenType"]?.stringValue == "DPoP")
        #expect(boundTokens["accessToken"] != firstTokens["accessToken"], "a bearer token is not handed out for --dpop")

        // Usage errors: these options belong to a person's sign-in.
        for wrong in [["--credential", "x"], ["--assertion-audience", "issuer", "--client-id", "backup-job"]] {
            let refused = try await LatchkeyCommand.run(["token", "--issuer", issuer.absoluteString] + (wrong.first == "--credential" ? ["--client-credentials", "--client-id", "backup-job"] : []) + wrong, environment: environment)
            #expect(refused.status == 2, "\(wrong): \(refused.stderr)")
        }
        let noClient = try await LatchkeyCommand.run(["token", "--issuer", issuer.absoluteString, "--client-credentials"], environment: environment)
        #expect(noClient.status == 2 && noClient.stderr.contains("--client-id"), "\(noClient.stderr)")

        // api --client-credentials presents the kept DPoP-bound token with a proof.
        let seen = Mutex<[String]>([])
        let router = Router()
        router.get("resource") { request, _ -> Response in
            seen.withLock { $0.append((request.headers[.authorization] ?? "") + "|" + (request.headers.first { $0.name.canonicalName == "dpop" }?.value ?? "")) }
            return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: "ok")))
        }
        try await LiveServer.run(router, label: "resource") { resource in
            let called = try await LatchkeyCommand.run(
                ["api", resource.appendingPathComponent("resource").absoluteString, "--resource-origin", resource.absoluteString,
                 "--client-credentials", "--scope", "jobs", "--dpop"] + key, environment: environment
            )
            #expect(called.status == 0 && called.stdout == "ok", "\(called.stderr)")
            let presented = try #require(seen.withLock { $0.last })
            #expect(presented.hasPrefix("DPoP \(boundTokens["accessToken"]?.stringValue ?? "-")|ey"), "\(presented.prefix(40))")
        }

        let deleted = try await LatchkeyCommand.run(["client-key", "--delete"] + key, environment: environment)
        #expect(deleted.status == 0 && deleted.stdout.contains("Deleted"), "\(deleted.stderr)")
        let gone = try await LatchkeyCommand.run(["token", "--client-credentials", "--scope", "jobs"] + key, environment: environment)
        #expect(gone.status == 1 && gone.stderr.contains("no client key"), "the kept tokens went with the key: \(gone.stderr)")
    }
}
