import Foundation
import LatchkeyOAuth
@testable import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

/// Credentials and vaults held by a TPM (docs/SECURITY.md, "Keys in the TPM"), through the
/// built `latchkey` against `latchkey serve`, each test with software TPMs (swtpm) of its
/// own on free loopback ports. The TPM is chosen the way a user chooses it, with
/// `TPM2OPENSSL_TCTI` in the command's environment: OpenSSL's tpm2 provider reads it
/// nowhere else, which is also why these run `latchkey` as a process.
@Suite("latchkey with TPM keys (swtpm)", .requires(if: SoftwareTPM.available, "skipped: swtpm or tpm2-openssl is not installed (.ci/run installs them)"))
struct TPMCommandLineTests {
    typealias CLI = CommandLineTests

    /// A provider, an identity `ada` and a bind URL for her.
    struct Provider {
        let server: SpawnedProcess
        let issuer: URL

        static func start() async throws -> Provider {
            try #require(FileManager.default.isExecutableFile(atPath: CLI.binary.path), "latchkey is built with the tests")
            let (server, issuer) = try await CLI.serve()
            return Provider(server: server, issuer: issuer)
        }

        func bindURL(for username: String) async throws -> String {
            let created = try await CLI.latchkey(
                ["admin", "create-identity", "--idp", issuer.absoluteString, "--username", username, "--json"],
                environment: ["LATCHKEY_ADMIN_TOKEN": CLI.adminToken]
            )
            #expect(created.status == 0, "\(created.stderr)")
            return try #require(try CLI.object(created.stdout)["bindURL"]?.stringValue)
        }

        func stop() { CLI.stop(server) }
    }

    /// A vault directory with its passphrase, removed at the end.
    struct Store {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("latchkey-tpm-\(UUID().uuidString)")
        let passphrase = "tpm test vault passphrase"

        func environment(_ tpm: SoftwareTPM?, _ extra: [String: String] = [:]) -> [String: String] {
            var environment = ["LATCHKEY_STORE": directory.path, "LATCHKEY_PASSPHRASE": passphrase]
            // No TPM: a port nothing listens on (the test's own swtpm, killed, or port 1).
            environment["TPM2OPENSSL_TCTI"] = tpm?.tcti ?? "swtpm:host=127.0.0.1,port=1"
            return environment.merging(extra) { $1 }
        }

        /// Every file under the vault with its bytes, to show nothing changed.
        func snapshot() throws -> [String: Data] {
            var files: [String: Data] = [:]
            let enumerator = try #require(FileManager.default.enumerator(atPath: directory.path))
            for case let path as String in enumerator where !path.hasSuffix(".lock") {
                var isDirectory: ObjCBool = false
                let full = directory.appendingPathComponent(path).path
                if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue {
                    files[path] = try Data(contentsOf: URL(fileURLWithPath: full))
                }
            }
            return files
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    static func credential(_ run: ChildProcess.Output) throws -> JSONValue {
        try #require(try CLI.object(run.stdout)["credential"], "\(run.stdout) \(run.stderr)")
    }

    static func listed(_ store: Store, _ tpm: SoftwareTPM?) async throws -> [JSONValue] {
        let listed = try await CLI.latchkey(["list", "--json"], environment: store.environment(tpm))
        #expect(listed.status == 0, "\(listed.stderr)")
        return try #require(try CLI.object(listed.stdout)["credentials"]?.arrayValue, "\(listed.stdout)")
    }

    static func signIn(_ provider: Provider, _ store: Store, _ tpm: SoftwareTPM?) async throws -> ChildProcess.Output {
        try await CLI.latchkey(["authenticate", "--issuer", provider.issuer.absoluteString, "--json"], environment: store.environment(tpm))
    }

    @Test("bind, sign in, export and import with TPM keys on two TPMs; the vault holds TSS2 blobs and no PKCS#8")
    func bindSignInTransfer() async throws {
        let provider = try await Provider.start()
        defer { provider.stop() }
        let (first, second) = (try await SoftwareTPM(), try await SoftwareTPM())
        let (exporter, importer) = (Store(), Store())
        defer { exporter.remove(); importer.remove() }

        let bound = try await CLI.latchkey(["bind", try await provider.bindURL(for: "ada"), "--key-protection", "tpm", "--json"], environment: exporter.environment(first))
        #expect(bound.status == 0, "\(bound.stderr)")
        let credential = try Self.credential(bound)
        #expect(credential["keyProtection"]?.stringValue == "tpm" && credential["algorithm"]?.stringValue == "ES256")
        #expect(bound.stderr.contains("Key protection: tpm"), "\(bound.stderr)")
        let listing = try await Self.listed(exporter, first)
        #expect(listing.count == 1 && listing.first?["keyProtection"]?.stringValue == "tpm" && listing.first?["usable"]?.boolValue == true, "\(listing)")

        let signedIn = try await Self.signIn(provider, exporter, first)
        #expect(signedIn.status == 0, "\(signedIn.stderr)")

        // Export from the first TPM's vault (the approval is signed there), import into
        // the second's (a new key made there).
        let id = try #require(credential["id"]?.stringValue)
        let (export, output) = try ChildProcess.start(CLI.binary, ["export", "--yes", "--no-qr", "--json", "--", id], environment: exporter.environment(first))
        defer { if export.isRunning { export.terminate() } }
        let (line, transcript) = await ChildProcess.firstLine(of: output) { (try? CLI.object(String($0)))?["event"]?.stringValue == "codeIssued" }
        let code = try #require(line.flatMap { (try? CLI.object($0))?["code"]?.stringValue }, "no code from export: \(transcript)")
        let imported = try await CLI.latchkey(
            ["import", code, "--issuer", provider.issuer.absoluteString, "--device-name", "second", "--key-protection", "tpm", "--json"],
            environment: importer.environment(second)
        )
        #expect(imported.status == 0, "\(imported.stderr)")
        let importedCredential = try #require((try CLI.object(imported.stdout)["credentials"]?.arrayValue)?.first, "\(imported.stdout)")
        #expect(importedCredential["keyProtection"]?.stringValue == "tpm")
        _ = await ChildProcess.drain(output)
        #expect(await ChildProcess.waitForExit(export) == 0)
        let importerSignIn = try await Self.signIn(provider, importer, second)
        #expect(importerSignIn.status == 0, "\(importerSignIn.stderr)")
        // DPoP with the credential's DPoP key, in the second TPM too: the kept bearer
        // tokens do not do for --dpop, so api signs in bound, then calls with a proof.
        let userinfo = provider.issuer.appendingPathComponent("userinfo").absoluteString
        let boundCall = try await CLI.latchkey(["api", userinfo, "--issuer", provider.issuer.absoluteString, "--dpop"], environment: importer.environment(second))
        #expect(boundCall.status == 0 && boundCall.stdout.contains("\"sub\""), "\(boundCall.stdout) \(boundCall.stderr)")

        // Inside the vault: each TPM record seals a TSS2 blob, never a PKCS#8 key, and no
        // file anywhere in it holds a PEM or PKCS#8 private key.
        for store in [exporter, importer] {
            let vault = try KeyVault.open(at: store.directory, key: .passphrase(store.passphrase))
            let entries = try vault.entries()
            // The credential's key and its DPoP key (made when the sign-in's tokens were
            // kept), both in the TPM, as the credential's key is.
            #expect(entries.count == 2 && entries.allSatisfy { $0.protection == .tpm }, "\(entries.map(\.protection))")
            for entry in entries {
                var (protection, bytes) = try vault.sealedKeyMaterial(entry.handle)
                defer { bytes.resetBytes(in: 0..<bytes.count) }
                #expect(protection == .tpm)
                #expect(bytes.starts(with: Data("-----BEGIN TSS2 PRIVATE KEY-----".utf8)))
                #expect((try? SigningKey(pkcs8DER: bytes)) == nil)
            }
            for (path, bytes) in try store.snapshot() {
                let text = String(decoding: bytes, as: UTF8.self)
                #expect(!text.contains("PRIVATE KEY") && bytes.range(of: Data([0x02, 0x01, 0x00, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01])) == nil, "\(path)")
            }
        }
    }

    @Test("the same vault against a fresh TPM state cannot sign: a typed error, the record listed as unusable, nothing lost")
    func anotherTPM() async throws {
        let provider = try await Provider.start()
        defer { provider.stop() }
        let (own, fresh) = (try await SoftwareTPM(), try await SoftwareTPM())
        let store = Store()
        defer { store.remove() }
        let bound = try await CLI.latchkey(["bind", try await provider.bindURL(for: "ada"), "--key-protection", "tpm", "--json"], environment: store.environment(own))
        #expect(bound.status == 0, "\(bound.stderr)")
        let before = try store.snapshot()

        let refused = try await Self.signIn(provider, store, fresh)
        #expect(refused.status == 1 && refused.stderr.contains("another TPM") && refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
        let listing = try await Self.listed(store, fresh)
        #expect(listing.count == 1 && listing.first?["usable"]?.boolValue == false, "\(listing)")
        #expect((listing.first?["unusableReason"]?.stringValue)?.contains("another TPM") == true)
        let text = try await CLI.latchkey(["list"], environment: store.environment(fresh))
        #expect(text.status == 0 && text.stdout.contains("tpm key UNUSABLE"), "\(text.stdout)")
        #expect(try store.snapshot().filter { !$0.key.hasPrefix("keys/") } == before.filter { !$0.key.hasPrefix("keys/") })
        #expect(Set(try store.snapshot().keys) == Set(before.keys), "no record removed or added")

        // Back on its own TPM, it signs in.
        let again = try await Self.signIn(provider, store, own)
        #expect(again.status == 0, "\(again.stderr)")
    }

    @Test("a TPM-sealed vault opens with no passphrase on its TPM, and not on another or without the TPM")
    func sealedVault() async throws {
        let provider = try await Provider.start()
        defer { provider.stop() }
        let (own, other) = (try await SoftwareTPM(), try await SoftwareTPM())
        let store = Store()
        defer { store.remove() }
        let noPassphrase = ["LATCHKEY_PASSPHRASE": "", "LATCHKEY_VAULT_KEY": "tpm"]
        let bound = try await CLI.latchkey(["bind", try await provider.bindURL(for: "ada"), "--json"], environment: store.environment(own, noPassphrase))
        #expect(bound.status == 0, "\(bound.stderr)")
        let header = try String(contentsOf: store.directory.appendingPathComponent("vault.json"), encoding: .utf8)
        #expect(header.contains("\"keyKind\" : \"tpm\""), "\(header)")
        let before = try store.snapshot()

        let opened = try await CLI.latchkey(["list", "--json", "--vault-key", "tpm"], environment: store.environment(own, ["LATCHKEY_PASSPHRASE": ""]))
        let openedCredentials = try CLI.object(opened.stdout)["credentials"]?.arrayValue
        #expect(opened.status == 0 && openedCredentials?.count == 1, "\(opened.stderr)")
        let sealedSignIn = try await CLI.latchkey(
            ["authenticate", "--issuer", provider.issuer.absoluteString], environment: store.environment(own, noPassphrase)
        )
        #expect(sealedSignIn.status == 0, "\(sealedSignIn.stderr)")

        let elsewhere = try await CLI.latchkey(["list"], environment: store.environment(other, noPassphrase))
        #expect(elsewhere.status == 1 && elsewhere.stderr.contains("another TPM"), "\(elsewhere.stderr)")
        let noTPM = try await CLI.latchkey(["list"], environment: store.environment(nil, noPassphrase))
        #expect(noTPM.status == 1 && noTPM.stderr.contains("TPM2OPENSSL_TCTI"), "\(noTPM.stderr)")
        let withPassphrase = try await CLI.latchkey(["list"], environment: store.environment(own))
        #expect(withPassphrase.status == 1 && withPassphrase.stderr.contains("--vault-key tpm"), "\(withPassphrase.stderr)")
        #expect(try store.snapshot()["vault.json"] == before["vault.json"])
    }

    @Test("a client key in the TPM: client-key --key-protection tpm, registered at latchkey serve and at the Authlib provider; client credentials signed in the TPM at both; no TPM, no token")
    func clientKeyInTPM() async throws {
        let provider = try await Provider.start()
        defer { provider.stop() }
        let store = Store()
        defer { store.remove() }
        let tpm = try await SoftwareTPM()
        let key = ["--issuer", provider.issuer.absoluteString, "--client-id", "tpm-job"]
        let made = try await CLI.latchkey(["client-key", "--key-protection", "tpm", "--json"] + key, environment: store.environment(tpm))
        try #require(made.status == 0, "\(made.stderr)")
        let shown = try CLI.object(made.stdout)
        #expect(shown["keyProtection"]?.stringValue == "tpm")
        let jwks = try #require(shown["jwks"]).json()
        let jwksFile = store.directory.appendingPathComponent("jwks.json")
        try jwks.write(to: jwksFile)
        let registered = try await CLI.latchkey(
            ["admin", "create-client", "--idp", provider.issuer.absoluteString, "--client-id", "tpm-job", "--jwks", jwksFile.path, "--grant", "client_credentials", "--scope", "jobs"],
            environment: ["LATCHKEY_ADMIN_TOKEN": CLI.adminToken]
        )
        try #require(registered.status == 0, "\(registered.stderr)")
        let token = try await CLI.latchkey(["token", "--client-credentials", "--scope", "jobs", "--dpop", "--json"] + key, environment: store.environment(tpm))
        #expect(token.status == 0 && (try? CLI.object(token.stdout)["tokenType"]?.stringValue) == "DPoP", "\(token.stderr)")
        // Without the TPM the key cannot sign: a typed failure, not a token.
        let noTPM = try await CLI.latchkey(["token", "--client-credentials", "--scope", "jobs"] + key, environment: store.environment(nil))
        #expect(noTPM.status == 1 && noTPM.stderr.contains("TPM"), "\(noTPM.stderr)")

        if !(await AuthlibProvider.available) { try TestEnvironment.unavailable("python3 with authlib and flask (.ci/run installs them)") }
        let authlib = try await AuthlibProvider()
        let elsewhere = ["--issuer", authlib.issuer.absoluteString, "--client-id", "tpm-job"]
        let second = try await CLI.latchkey(["client-key", "--key-protection", "tpm"] + elsewhere, environment: store.environment(tpm))
        try #require(second.status == 0, "\(second.stderr)")
        try await authlib.register(clientID: "tpm-job", jwks: Data(second.stdout.utf8), grantTypes: ["client_credentials"], scope: "jobs")
        let there = try await CLI.latchkey(
            ["token", "--client-credentials", "--scope", "jobs", "--assertion-audience", "token-endpoint"] + elsewhere, environment: store.environment(tpm)
        )
        #expect(there.status == 0 && !there.stdout.isEmpty, "\(there.stderr)")
    }

    @Test("--key-protection auto picks software when no TPM answers, the TPM when one does, and says which")
    func automatic() async throws {
        let provider = try await Provider.start()
        defer { provider.stop() }
        let store = Store()
        defer { store.remove() }
        let soft = try await CLI.latchkey(["bind", try await provider.bindURL(for: "ada"), "--key-protection", "auto", "--json"], environment: store.environment(nil))
        #expect(soft.status == 0, "\(soft.stderr)")
        #expect(try Self.credential(soft)["keyProtection"]?.stringValue == "software")
        #expect(soft.stderr.contains("automatic: no TPM answers"), "\(soft.stderr)")

        let tpm = try await SoftwareTPM()
        let hard = try await CLI.latchkey(["bind", try await provider.bindURL(for: "grace"), "--key-protection", "auto", "--json"], environment: store.environment(tpm))
        #expect(hard.status == 0, "\(hard.stderr)")
        #expect(try Self.credential(hard)["keyProtection"]?.stringValue == "tpm")
        #expect(hard.stderr.contains("automatic: a TPM answers at \(tpm.tcti)"), "\(hard.stderr)")
        let tpmOnly = try await CLI.latchkey(["bind", try await provider.bindURL(for: "alan"), "--key-protection", "tpm"], environment: store.environment(nil))
        #expect(tpmOnly.status == 1 && tpmOnly.stderr.contains("no TPM answers"), "\(tpmOnly.stderr)")
    }

    @Test("a TPM that stops answering mid-sign-in gives a typed error; once it is back the credential signs in (no counter burned)")
    func killedTPM() async throws {
        let provider = try await Provider.start()
        defer { provider.stop() }
        let tpm = try await SoftwareTPM()
        let store = Store()
        defer { store.remove() }
        let bound = try await CLI.latchkey(["bind", try await provider.bindURL(for: "ada"), "--key-protection", "tpm", "--json"], environment: store.environment(tpm))
        #expect(bound.status == 0, "\(bound.stderr)")
        #expect(try await Self.signIn(provider, store, tpm).status == 0)

        // The sign-in starts (the provider hands out its challenge), then the TPM is gone
        // when the key must sign.
        tpm.kill()
        let failed = try await Self.signIn(provider, store, tpm)
        #expect(failed.status == 1 && failed.stderr.contains("TPM") && failed.stderr.split(separator: "\n").count == 1, "\(failed.stderr)")
        #expect(failed.stderr.contains("TPM2OPENSSL_TCTI"), "names the setting: \(failed.stderr)")

        // The same TPM back (its state, a new port): the next sign-in is accepted, so the
        // counter the failed attempt used up did not lock the credential out.
        let back = try await SoftwareTPM(state: tpm.state)
        let signedIn = try await Self.signIn(provider, store, back)
        #expect(signedIn.status == 0, "\(signedIn.stderr)")
        let listing = try await Self.listed(store, back)
        #expect(listing.first?["usable"]?.boolValue == true && (listing.first?["signCount"]?.intValue ?? 0) >= 2, "\(listing)")

        // Mid-flow, on a live connection: an export signs with the TPM as it opens the
        // transfer, then the TPM dies before the approval is signed.
        let id = try #require(listing.first?["id"]?.stringValue)
        let (export, output) = try ChildProcess.start(CLI.binary, ["export", "--yes", "--no-qr", "--json", "--", id], environment: store.environment(back), mergingErrors: true)
        defer { if export.isRunning { export.terminate() } }
        let (line, transcript) = await ChildProcess.firstLine(of: output) { (try? CLI.object(String($0)))?["event"]?.stringValue == "codeIssued" }
        let code = try #require(line.flatMap { (try? CLI.object($0))?["code"]?.stringValue }, "no code from export: \(transcript)")
        back.kill()
        let importer = Store()
        defer { importer.remove() }
        let imported = try await CLI.latchkey(
            ["import", code, "--issuer", provider.issuer.absoluteString, "--device-name", "second", "--timeout", "20"], environment: importer.environment(nil)
        )
        let exported = String(decoding: await ChildProcess.drain(output), as: UTF8.self)
        #expect(await ChildProcess.waitForExit(export) == 1)
        #expect(exported.contains("stopped answering") && exported.contains("TPM2OPENSSL_TCTI"), "\(exported)")
        #expect(imported.status == 1, "the import is not approved: \(imported.stdout) \(imported.stderr)")

        // And back once more: nothing was lost, the credential signs in.
        let third = try await SoftwareTPM(state: tpm.state)
        let last = try await Self.signIn(provider, store, third)
        #expect(last.status == 0, "\(last.stderr)")
    }
}
