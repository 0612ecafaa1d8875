import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Latchkey

extension LatchkeyCommand {
    /// `latchkey export <credential-id>`: shows a transfer code (and its QR code), waits
    /// for another device to redeem it, and approves (or declines) that device.
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "export", abstract: "Let another device sign in as this credential's user, with a short code.")

        @Argument(help: "The credential id, as `latchkey list` shows it (after `--` when it starts with '-').")
        var id: String

        @Flag(help: "Approve the importing device without asking.")
        var yes = false

        @Flag(inversion: .prefixedNo, help: "Draw the code as a QR code (default: on a terminal).")
        var qr: Bool?

        @OptionGroup var store: StoreOptions

        func run() async throws {
            let vault = try store.embedded(allowing: [], stepHandler: StepAnswers.handler(code: nil, approveImports: yes))
            guard let credential = try await vault.credentials().first(where: { $0.id == id }) else {
                throw CommandFailure("no credential \(id) in the vault; `latchkey list` shows them")
            }
            // The credential's own provider is the one host this run may contact.
            let embedded = vault.allowing(domains: [credential.issuer?.host].compactMap { $0 })
            let drawQR = qr ?? (isatty(STDOUT_FILENO) == 1)
            for try await event in embedded.exportCredential(id: id) {
                switch event {
                case .codeIssued(let code, let expiresAt), .codeRotated(let code, let expiresAt):
                    let first = if case .codeIssued = event { true } else { false }
                    if store.json {
                        try JSONOutput.printLine(TransferEventOutput(event: first ? "codeIssued" : "codeRotated", code: code.displayed, expiresAt: Self.date(expiresAt)))
                        continue
                    }
                    say("\(first ? "Transfer code" : "New code"): \(code.displayed)   (valid until \(Self.time(expiresAt)); on the other device run: latchkey import \(code.displayed))")
                    if drawQR { say(try code.qrCode().rendered()) }
                case .codeRedeemed:
                    if store.json { try JSONOutput.printLine(TransferEventOutput(event: "codeRedeemed")) } else { say("Code redeemed; waiting for the other device's key…") }
                case .importRequested(let request):
                    if store.json {
                        try JSONOutput.printLine(TransferEventOutput(event: "importRequested", deviceName: request.deviceName, fingerprint: request.fingerprint))
                    } else {
                        say("Device \"\(request.deviceName)\" asks to sign in as \(credential.user.name).")
                        say("  Its key fingerprint: \(request.fingerprint) (compare with what that device shows)")
                    }
                case .completed(let request):
                    if store.json {
                        try JSONOutput.printLine(TransferEventOutput(event: "completed", deviceName: request.deviceName, fingerprint: request.fingerprint))
                    } else {
                        say("Approved: \"\(request.deviceName)\" can now sign in as \(credential.user.name).")
                    }
                case .declined(let request):
                    if store.json { try JSONOutput.printLine(TransferEventOutput(event: "declined", deviceName: request.deviceName)) } else { say("Declined \"\(request.deviceName)\".") }
                    if !yes, !Terminal.isInteractive {
                        throw CommandFailure("declined the import from \"\(request.deviceName)\": pass --yes to approve without a terminal")
                    }
                case .cancelled, .expired:
                    if store.json { try JSONOutput.printLine(TransferEventOutput(event: "\(event)")) }
                    throw CommandFailure("the transfer \(event) before any device imported; run export again for a new code")
                }
            }
        }

        /// Unbuffered, so whoever watches a long-running export sees each line at once.
        private func say(_ text: String) {
            TextOutput.line(text)
        }

        static func date(_ date: Date) -> String { date.formatted(.iso8601) }

        /// The local time of day, from the C library's time zone rules rather than
        /// Foundation's formatters (which bring ICU's data into the binary).
        static func time(_ date: Date) -> String {
            var seconds = time_t(date.timeIntervalSince1970)
            var parts = tm()
            guard localtime_r(&seconds, &parts) != nil else { return date.formatted(.iso8601) }
            return [parts.tm_hour, parts.tm_min, parts.tm_sec].map { $0 < 10 ? "0\($0)" : "\($0)" }.joined(separator: ":")
        }
    }

    /// `latchkey import <code>`: redeems a code another device shows, creates a key here and
    /// waits for that device to approve it.
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "import", abstract: "Receive a credential from another device with the code it shows.")

        @Argument(help: "The code, e.g. 7KQ-4M2-X9A (case, spaces and dashes do not matter).")
        var code: String

        @Option(help: ArgumentHelp("This device's name, shown to the other device (default: the host name).", valueName: "name"))
        var deviceName: String?

        @Option(help: ArgumentHelp("The identity provider the code is from (default: $LATCHKEY_ISSUER).", valueName: "url"))
        var issuer: String?

        @OptionGroup var store: StoreOptions
        @OptionGroup var protection: KeyProtectionOptions
        @OptionGroup var attestation: AttestationOptions

        func run() async throws {
            guard let issuerText = issuer ?? ProcessInfo.processInfo.environment["LATCHKEY_ISSUER"] else {
                throw ValidationError("give --issuer (the provider the code is from) or set LATCHKEY_ISSUER")
            }
            let (issuerURL, host) = try ClientOptions.issuer(issuerText)
            let (attest, authorityHosts) = try attestation.setting()
            let embedded = try store.embedded(allowing: [host] + authorityHosts, keyProtection: protection.setting(), attestation: attest)
            try await Self.receive(code: code, deviceName: deviceName, issuer: issuerURL, embedded: embedded, json: store.json)
        }

        /// What `import` and `open` do with a transfer code: wait for the other device's
        /// approval (showing this device's key fingerprint) and report what came.
        static func receive(code: String, deviceName: String?, issuer: URL, embedded: Embedded, json: Bool) async throws {
            let choice = embedded.keyProtectionForNewCredentials()
            let name = deviceName ?? ProcessInfo.processInfo.hostName
            let events = embedded.events()
            let watcher = Task {
                for await event in events {
                    if case .importPending(let pending) = event.kind, !json {
                        Terminal.note("Waiting for approval on the other device. This device's key fingerprint: \(pending.fingerprint)")
                    }
                }
            }
            defer { watcher.cancel() }
            let imported = try await embedded.importCredential(code: code, deviceName: name, issuer: issuer)
            for credential in imported { KeyProtectionOptions.report(credential, choice: choice) }
            if json { return try JSONOutput.print(CredentialsOutput(credentials: imported.map(CredentialOutput.init))) }
            for credential in imported {
                TextOutput.line("Imported credential \(credential.id) for \(TextOutput.field(credential.user.name)) at \(TextOutput.field(credential.issuer?.absoluteString ?? credential.rpID))")
            }
        }
    }
}
