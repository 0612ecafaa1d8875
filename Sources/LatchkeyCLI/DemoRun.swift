import Foundation
import LatchkeyCommandLine
import Latchkey
import LatchkeyProtocol
import LatchkeyCrypto
import LatchkeyIdP
import LatchkeyOAuth
import Logging
import Synchronization

/// The steps of `latchkey demo`, each printed in plain words (or as one JSON object) with
/// the URLs and ids involved. A failing step stops the run and says which and why.
final class DemoRun {
    let directory: URL
    let json: Bool
    let keepVaults: Bool
    private var number = 0

    /// What the devices' step handlers did, for the step that caused it to report.
    let notes = DemoNotes()

    static let clientID = "latchkey-cli"
    static let redirectURI = URL(string: "http://127.0.0.1/callback")

    init(directory: URL, json: Bool, keepVaults: Bool) {
        self.directory = directory
        self.json = json
        self.keepVaults = keepVaults
    }

    /// A step's outcome: lines for people, details for `--json`.
    struct Report {
        var lines: [String]
        var details: [String: JSONValue] = [:]
    }

    func step<Result>(_ name: String, _ title: String, _ body: () async throws -> (Result, Report)) async throws -> Result {
        number += 1
        do {
            let (result, report) = try await body()
            if json {
                try JSONOutput.printLine(DemoStepOutput(
                    step: number, name: name, title: title, ok: true, lines: report.lines, details: report.details.isEmpty ? nil : report.details
                ))
            } else {
                let text = (["", "Step \(number): \(title)"] + report.lines.map { "  " + $0 }).joined(separator: "\n")
                TextOutput.line(text)
            }
            return result
        } catch {
            let reason = (error as? LatchkeyError)?.reason ?? (error as? CommandFailure)?.message ?? "\(error)"
            if json {
                try JSONOutput.printLine(DemoStepOutput(step: number, name: name, title: title, ok: false, error: reason))
            }
            throw CommandFailure("demo step \(number) (\(title)) failed: \(reason)")
        }
    }


    /// A device: a vault in `directory/<name>` under a fresh 32-byte key file.
    func device(_ name: String, host: String, stepHandler: Embedded.StepHandler?) throws -> Embedded {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let keyFile = directory.appendingPathComponent("\(name).key")
        if !FileManager.default.fileExists(atPath: keyFile.path) {
            guard FileManager.default.createFile(atPath: keyFile.path, contents: try SecureRandom.bytes(count: 32), attributes: [.posixPermissions: 0o600]) else {
                throw CommandFailure("cannot write \(keyFile.path)")
            }
        }
        var logger = Logger(label: "latchkey-demo")
        logger.logLevel = .error
        var configuration = Embedded.Configuration(
            vaultDirectory: directory.appendingPathComponent(name), keySource: .keyFile(keyFile),
            allowedDomains: [host], stepHandler: stepHandler, logger: logger
        )
        configuration.transferPollInterval = .milliseconds(100)
        return try Embedded(configuration: configuration)
    }

    func run() async throws {
        var provider = ProviderConfiguration(adminToken: Base64URL.encode(try SecureRandom.bytes(count: 24)))
        // Quiet: the shutdown at the end logs the cancelled listener at error level.
        provider.logLevel = .critical
        // The device sign-in step polls every second instead of every five.
        provider.deviceCodeInterval = 1
        // The SSH step: certificates for keys that never leave the vault.
        provider.sshAuthority = true
        let adminToken = provider.adminToken
        guard let redirectURI = Self.redirectURI else { throw CommandFailure("bad redirect URI") }
        try await withReferenceProvider(configuration: provider) { issuer in
            let admin = AdminClient(issuer: issuer, token: adminToken)
            let host = issuer.host ?? "127.0.0.1"

            try await step("provider", "Start a reference identity provider") {
                ((), Report(
                    lines: [
                        "The reference provider (LatchkeyIdP) runs in this process at \(issuer.absoluteString),",
                        "on a free loopback port: OIDC discovery, JWKS, /authorize, /token, WebAuthn bind and sign-in.",
                        "Discovery: \(issuer.appendingPathComponent(".well-known/openid-configuration").absoluteString)",
                    ],
                    details: ["issuer": .string(issuer.absoluteString)]
                ))
            }

            // Device 1 answers steps like a user would: it reads the e-mailed code from the
            // provider's outbox, and approves the import request it is shown.
            let notes = notes
            let deviceOne = try device("device-1", host: host) { step in
                switch step.name {
                case .verifyCode:
                    let outbox = try await admin.send(AdminAPI.outbox)
                    guard let code = outbox.messages.last?.code else {
                        throw CommandFailure("no code in the provider's outbox")
                    }
                    notes.add("The provider asked for verify-code: \"\(step.message ?? "")\"")
                    notes.add("The code from the outbox (the e-mail stand-in) was entered: \(code)")
                    return .code(code)
                case .confirmImport:
                    let request = step.importRequest
                    notes.add("Device 1 was asked to approve \"\(request?.deviceName ?? "?")\" with key fingerprint \(request?.fingerprint ?? "?"), and approved.")
                    return .approve
                default:
                    throw CommandFailure("unexpected step \(step.name)")
                }
            }
            let deviceTwo = try device("device-2", host: host, stepHandler: nil)

            let (identity, bindURL): (String, URL) = try await step("create-identity", "Create an identity and a bind URL (admin API)") {
                let created = try await admin.send(
                    AdminAPI.createIdentity, body: AdminAPI.IdentityCreation(username: "ada", email: "ada@example.com", displayName: "Ada Lovelace")
                )
                let id = created.identity.id
                guard let url = URL(string: created.bindURL) else { throw CommandFailure("the provider's bind URL is not a URL") }
                return ((id, url), Report(
                    lines: ["Identity \(id) (username ada).", "Bind URL: \(url.absoluteString)", "An app receives it as this link or as a deep link: myapp://bind?api_base_url=…&job_id=…&token=…"],
                    details: ["identity": .string(id), "bindURL": .string(url.absoluteString)]
                ))
            }

            let first: Credential = try await step("register", "Register a credential from the bind URL (device 1)") {
                let bound = try await deviceOne.registerCredential(from: bindURL)
                let credential = bound.credential
                return (credential, Report(
                    lines: [
                        "Device 1 made an \(credential.algorithm) key pair in its vault \(directory.appendingPathComponent("device-1").path),",
                        "answered the WebAuthn creation options and the provider verified the registration.",
                        "Credential \(credential.id) for \(credential.user.name) at \(credential.rpID).",
                    ],
                    details: ["credential": .string(credential.id), "rpID": .string(credential.rpID)]
                ))
            }

            try await step("list", "List the credentials on device 1") {
                let listed = try await deviceOne.credentials()
                return ((), Report(
                    lines: listed.map { "\($0.id)  \($0.user.name)  \($0.issuer?.absoluteString ?? $0.rpID)  \($0.state)  counter \($0.signCount)" },
                    details: ["credentials": .array(listed.map { .string($0.id) })]
                ))
            }

            try await step("authenticate", "Sign in with it over the authorization challenge endpoint: PKCE, assertion, code exchange, validated ID token") {
                let tokens = try await deviceOne.authenticate(issuer: issuer, clientID: Self.clientID, redirectURI: redirectURI, scopes: ["openid", "profile"])
                guard let claims = tokens.claims, claims.subject == identity else { throw CommandFailure("the ID token names another subject") }
                return ((), Report(
                    lines: [
                        "Device 1 posted its authorization request (PKCE S256) to the provider's authorization challenge",
                        "endpoint (draft-ietf-oauth-first-party-apps, no browser or redirect), got 403 insufficient_authorization",
                        "with WebAuthn options, signed them with its key, got the code, exchanged it with the verifier",
                        "at /token, and validated the ID token's signature against /jwks.",
                        "ID token claims: sub \(claims.subject), iss \(claims.issuer), aud \(claims.audiences.joined(separator: ",")),",
                        "  amr \(claims.all["amr"]?.arrayValue?.compactMap(\.stringValue).joined(separator: ",") ?? "-"), expires \(claims.expiresAt.formatted(.iso8601)).",
                    ],
                    details: ["subject": .string(claims.subject), "issuer": .string(claims.issuer), "audience": .array(claims.audiences.map(JSONValue.string))]
                ))
            }

            try await step("ssh-certificate", "An SSH certificate for a key in device 1's vault, after a passkey sign-in (the provider's SSH CA)") {
                let login = try await deviceOne.sshLogin(issuer: issuer, clientID: Self.clientID, redirectURI: redirectURI)
                let shown = try Self.sshKeygenListing(login.certificate)
                return ((), Report(
                    lines: [
                        "Device 1 made an SSH key in its vault, signed in with its passkey for scope ssh, proved it holds the key,",
                        "and got a user certificate for principals \(login.principals.joined(separator: ", ")) until \(AuditEvent.formatTime(login.validBefore))",
                        "(serial \(login.serial)). `latchkey ssh login` does this; the agent then serves key and certificate to ssh.",
                    ] + (shown.map { ["ssh-keygen -L reads it:"] + $0.map { "  " + $0 } } ?? ["(ssh-keygen is not installed: apt-get install openssh-client to read it with ssh-keygen -L.)"]),
                    details: ["serial": .string(login.serial), "principals": .array(login.principals.map(JSONValue.string)), "keyID": .string(login.keyID)]
                ))
            }

            try await step("policy-step", "A policy step: a bind link that requires an e-mailed code (verify-code)") {
                let created = try await admin.send(AdminAPI.createIdentity, body: AdminAPI.IdentityCreation(username: "bob", email: "bob@example.com"))
                let bob = created.identity.id
                let job = try await admin.send(AdminAPI.createBindJob, bob, body: AdminAPI.BindJobRequest(requireEmailCode: true))
                guard let link = URL(string: job.bindURL) else { throw CommandFailure("the provider's bind URL is not a URL") }
                let bound = try await deviceOne.registerCredential(from: link)
                return ((), Report(
                    lines: ["Identity bob's bind link asks for a code first."] + notes.take() + ["Bound credential \(bound.credential.id) for bob."],
                    details: ["credential": .string(bound.credential.id)]
                ))
            }

            let exportWatch = ExportWatch()
            let code: TransferCode = try await step("export", "Export ada's credential to another device: a short code (and its QR code)") {
                exportWatch.start(deviceOne.exportCredential(id: first.id))
                let code = try await exportWatch.code()
                let qr = try code.qrCode().rendered()
                return (code, Report(
                    lines: ["Device 1 proved it holds the credential and got the code \(code.displayed) (valid 90 s, single use):"]
                        + (json ? [] : qr.split(separator: "\n").map(String.init)),
                    details: ["code": .string(code.displayed)]
                ))
            }

            let imported: Credential = try await step("import", "Import on device 2 with the code; device 1 approves") {
                let credentials = try await deviceTwo.importCredential(code: code.displayed, deviceName: "demo-device-2", issuer: issuer)
                try await exportWatch.finish()
                guard let credential = credentials.first else { throw CommandFailure("no credential imported") }
                return (credential, Report(
                    lines: ["Device 2 redeemed the code, made its own key (no private key left device 1), and submitted it as \"demo-device-2\"."]
                        + notes.take() + ["Device 2 now holds credential \(credential.id) for \(credential.user.name)."],
                    details: ["credential": .string(credential.id)]
                ))
            }

            try await step("authenticate-imported", "Sign in on device 2 with its own key") {
                let tokens = try await deviceTwo.authenticate(issuer: issuer, clientID: Self.clientID, redirectURI: redirectURI)
                guard tokens.claims?.subject == identity else { throw CommandFailure("device 2 signed in as someone else") }
                return ((), Report(lines: ["Signed in as \(identity), the same identity as device 1, with a different key."], details: ["subject": .string(identity)]))
            }

            try await step("client-credentials", "A service gets a token with its own key (private_key_jwt, client credentials)") {
                let service = try device("service", host: host, stepHandler: nil)
                let key = try await service.clientKey(issuer: issuer, clientID: "backup-job")
                let jwks = try JSONDecoder().decode(JWKSDocument.self, from: key.publicJWKSet)
                _ = try await admin.send(AdminAPI.createClient, body: AdminAPI.Client(id: "backup-job", jwks: jwks, grantTypes: [GrantType.clientCredentials.rawValue], scopes: ["backup"]))
                let tokens = try await service.clientCredentials(issuer: issuer, clientID: "backup-job", scopes: ["backup"], dpop: true)
                let again = try await service.clientCredentials(issuer: issuer, clientID: "backup-job", scopes: ["backup"], dpop: true)
                guard again.accessToken == tokens.accessToken else { throw CommandFailure("the service's token was not kept") }
                return ((), Report(
                    lines: [
                        "The service made a client key in its vault (kid \(key.keyID)); its public JWK Set was registered",
                        "as client backup-job (`latchkey admin create-client --jwks`), as one would paste it into Keycloak or Okta.",
                        "It signed an RFC 7523 assertion (iss = sub = backup-job, aud = the issuer) and got a \(tokens.tokenType) token",
                        "for scope \(tokens.tokenSet.scope ?? "-") with no ID token: no person signed in. A second ask reused the kept token.",
                    ],
                    details: ["clientID": .string("backup-job"), "keyID": .string(key.keyID), "tokenType": .string(tokens.tokenType)]
                ))
            }

            try await step("device-grant", "A headless device signs in by code; device 1 approves with its passkey (RFC 8628)") {
                let headless = try device("device-3", host: host, stepHandler: nil)
                var shown: DeviceCodePrompt?
                var tokens: Tokens?
                var approval: Task<Void, any Error>?
                for try await event in headless.deviceAuthorization(issuer: issuer, clientID: Self.clientID, scopes: ["openid", "profile"]) {
                    switch event {
                    case .code(let prompt):
                        shown = prompt
                        approval = Task {
                            try await deviceOne.approveDevice(issuer: issuer, userCode: prompt.userCode, credential: first.id) { request in
                                notes.add("Device 1 was shown: client \(request.clientID), scope \(request.scopes.joined(separator: " ")), asked from \(request.requestedFrom); it approved.")
                                return true
                            }
                        }
                    case .pending, .slowDown:
                        break
                    case .signedIn(let received):
                        tokens = received
                    }
                }
                try await approval?.value
                guard let prompt = shown, let tokens, tokens.claims?.subject == identity else { throw CommandFailure("the device did not sign in as ada") }
                return ((), Report(
                    lines: ["Device 3 holds no credential. It asked for a code and showed \(prompt.userCode) with \(prompt.verificationURI.absoluteString)",
                            "(and a QR code of \(prompt.verificationURIComplete?.absoluteString ?? "-")); on device 1: latchkey approve \(prompt.userCode)."]
                        + notes.take()
                        + ["Device 3 polled /token until then and got tokens for \(identity) (ID token without a nonce, as RFC 8628 has none)."],
                    details: ["userCode": .string(prompt.userCode), "subject": .string(identity)]
                ))
            }

            try await step("delete", "Delete the credential from device 2") {
                let deleted = try await deviceTwo.deleteCredential(id: imported.id)
                let left = try await deviceTwo.credentials()
                guard deleted, left.isEmpty else { throw CommandFailure("the credential is still there") }
                return ((), Report(lines: ["Deleted \(imported.id); device 2's vault is empty."]))
            }
        }
        try await step("clean-up", "Clean up") {
            ((), Report(lines: [
                "The provider stopped.",
                keepVaults ? "The device vaults stay in \(directory.path)." : "The throw-away vaults in \(directory.path) are removed.",
                "Next: `swift run latchkey serve` and the commands in README.md.",
            ]))
        }
    }
}

extension DemoRun {
    /// What `ssh-keygen -L` says of `certificate` (its type, key id, serial, principals and
    /// validity lines), or nil when OpenSSH's ssh-keygen is not installed.
    static func sshKeygenListing(_ certificate: String) throws -> [String]? {
        let keygen = URL(fileURLWithPath: "/usr/bin/ssh-keygen")
        guard FileManager.default.isExecutableFile(atPath: keygen.path) else { return nil }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-demo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("id-cert.pub")
        try Data((certificate + "\n").utf8).write(to: file)
        let process = Process()
        process.executableURL = keygen
        process.arguments = ["-L", "-f", file.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CommandFailure("ssh-keygen -L could not read the certificate") }
        // The certificate's own lines; the principals follow their heading, one a line.
        var lines: [String] = []
        var inPrincipals = false
        for line in text.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) where !line.isEmpty {
            if line.hasPrefix("Principals:") {
                inPrincipals = true
                lines.append("Principals:")
            } else if line.contains(":") {
                inPrincipals = false
                if ["Type:", "Signing CA:", "Key ID:", "Serial:", "Valid:"].contains(where: line.hasPrefix) { lines.append(line) }
            } else if inPrincipals {
                lines.append("  " + line)
            }
        }
        return lines
    }
}

/// Lines the step handlers leave for the step that is running.
final class DemoNotes: Sendable {
    private let lines = Mutex<[String]>([])

    func add(_ line: String) {
        lines.withLock { $0.append(line) }
    }

    func take() -> [String] {
        lines.withLock { lines in
            defer { lines.removeAll() }
            return lines
        }
    }
}

/// Consumes an export stream in the background, keeping its code and its end.
final class ExportWatch: Sendable {
    private let state = Mutex<(code: TransferCode?, events: [ExportEvent])>((nil, []))
    private let task = Mutex<Task<Void, any Error>?>(nil)

    func start(_ stream: AsyncThrowingStream<ExportEvent, any Error>) {
        let running = Task { [self] in
            for try await event in stream { record(event) }
        }
        task.withLock { $0 = running }
    }

    private func record(_ event: ExportEvent) {
        state.withLock {
            if case .codeIssued(let code, _) = event { $0.code = code }
            $0.events.append(event)
        }
    }

    func code() async throws -> TransferCode {
        for _ in 0..<200 {
            if let code = state.withLock({ $0.code }) { return code }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw CommandFailure("no transfer code came")
    }

    /// Waits for the export to end; it must have completed.
    func finish() async throws {
        guard let task = task.withLock({ $0 }) else { return }
        try await task.value
        let completed = state.withLock { $0.events.contains { if case .completed = $0 { true } else { false } } }
        guard completed else { throw CommandFailure("the export did not complete") }
    }
}
