import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Latchkey
import LatchkeyCrypto
import LatchkeyProtocol
import Logging

extension LatchkeyCommand {
    /// `latchkey pam …`: signing in to this host (sshd, sudo, login) with a passkey on
    /// another device, through `pam_latchkey.so` (docs/guides/pam.md; docs/PROTOCOL.md section 13).
    struct PAM: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pam",
            abstract: "Let sshd, sudo and login accept an approval made with a passkey on another device (pam_latchkey.so).",
            subcommands: [PAMEnroll.self, PAMTest.self, PAMHelper.self]
        )
    }

    /// `latchkey pam enroll --issuer URL --client-id ID`: this host's vault, vault key and
    /// client key, and the configuration; prints the JWK Set an admin registers.
    struct PAMEnroll: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "enroll",
            abstract: "Make this host's client key (in a root-only vault) and /etc/latchkey/pam.conf; print the JWK Set to register with admin create-client."
        )

        @OptionGroup var enrollment: HostEnrollmentOptions

        @Option(help: ArgumentHelp("Where the configuration goes.", valueName: "file"))
        var config: String = PAMConfiguration.defaultPath

        func validate() throws {
            guard config.hasPrefix("/") else { throw ValidationError("--config must be an absolute path") }
        }

        func run() async throws {
            let (configuration, key) = try await HostVault.enroll(
                PAMConfiguration(issuer: try enrollment.issuerURL(), clientID: enrollment.clientID, vault: enrollment.vaultURL, vaultKeyFile: enrollment.vaultKeyURL),
                at: config, keyProtection: try enrollment.protection.setting()
            )
            HostVault.printRegistration(key, issuer: configuration.issuer, clientID: configuration.clientID, config: config, register: "--grant device_code")
        }
    }

    /// `latchkey pam test USER`: one approval for USER from this terminal, as the module
    /// would run it, without PAM.
    struct PAMTest: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "test",
            abstract: "Run one approval for USER from this terminal, as pam_latchkey would (exit 0 when an identity allowed for USER approves)."
        )

        @Argument(help: "The account on this host.")
        var user: String

        @Option(help: ArgumentHelp("The PAM service to name.", valueName: "name"))
        var service: String = "latchkey-test"

        @Option(help: ArgumentHelp("The configuration.", valueName: "file"))
        var config: String = PAMConfiguration.defaultPath

        func run() async throws {
            let request = PAMHelperSession.Request(service: service, user: user, remoteHost: nil, remoteUser: nil, tty: nil)
            let outcome = await PAMApproval.run(request, configurationPath: config, show: { Terminal.note($0) }, prompt: nil)
            Terminal.note(outcome.log)
            guard outcome.verdict == .success else { throw ExitCode(1) }
        }
    }

    /// `latchkey pam helper`: what `pam_latchkey.so` runs, as root, with stdin and stdout
    /// its pipe. It trusts nothing of the environment (the module gives it an empty one,
    /// and the configuration's path comes from the module's own arguments).
    struct PAMHelper: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "helper",
            abstract: "The helper pam_latchkey.so runs (a line protocol on stdin and stdout); not for people.",
            shouldDisplay: false
        )

        @Option(help: ArgumentHelp("The configuration.", valueName: "file"))
        var config: String = PAMConfiguration.defaultPath

        func run() async throws {
            var session = PAMHelperSession()
            let request: PAMHelperSession.Request
            do {
                request = try session.readRequest()
            } catch {
                session.start()
                session.result(.authError, "latchkey: refused a malformed request from pam_latchkey: \(error)")
                return
            }
            session.start()
            // A prompt's answer (`CONTINUE`, once the person pressed Enter) is not waited
            // for: the approval keeps polling, and its result may come first.
            let output = session
            let outcome = await PAMApproval.run(
                request, configurationPath: config, show: { output.info($0) }, prompt: { output.prompt($0) }
            )
            if let person = outcome.person { session.error(person) }
            session.result(outcome.verdict, outcome.log)
        }
    }
}

/// One approval, the same for the helper and `latchkey pam test`: the configuration, the
/// mapping, the host's device authorization and what it answers, with every failure a
/// verdict and one line (for the person and the journal) and never a secret.
enum PAMApproval {
    static let unavailable = "Passkey approval is unavailable right now."
    static let failed = "The passkey approval failed."

    /// The facade over the host's vault: the configuration's directory and key file, the
    /// provider's host only, tokens never kept, no agent, no prompts.
    static func embedded(_ configuration: PAMConfiguration, keyProtection: KeyProtectionSetting = .software) throws -> Embedded {
        try HostVault.embedded(
            issuer: configuration.issuer, vault: configuration.vault, vaultKeyFile: configuration.vaultKeyFile, keyProtection: keyProtection,
            cachesTokens: false, logger: HostVault.quietLogger("latchkey-pam")
        )
    }

    static func run(
        _ request: PAMHelperSession.Request, configurationPath: String, show: @escaping @Sendable (String) -> Void, prompt: (@Sendable (String) -> Void)?
    ) async -> PAMOutcome {
        let who = "\(request.service.displaySafe(maximumLength: 64)) user \(request.user.displaySafe(maximumLength: 64))"
            + (request.remoteHost.map { " from \($0.displaySafe(maximumLength: 128))" } ?? "")
        let configuration: PAMConfiguration
        do {
            configuration = try PAMConfiguration.load(configurationPath)
            try configuration.checkVaultKeyFile()
        } catch {
            return .init(.unavailable, person: Self.unavailable, log: "latchkey: \(who): \(error)")
        }
        let allowed = configuration.identities(for: request.user)
        guard !allowed.isEmpty else {
            return .init(.userUnknown, person: "No passkey approval is set up for this account.",
                         log: "latchkey: \(who): no identity may approve this account (map it in \(configurationPath.displaySafe(maximumLength: 128)))")
        }
        let approval: HostLoginApproval
        do {
            let embedded = try embedded(configuration)
            // What the approver is shown: control and bidi characters written as escapes
            // (a remote host name is whatever the connecting side made it).
            let hostRequest = HostLoginRequest(
                service: request.service.logSafe(maximumLength: 64), user: request.user.logSafe(maximumLength: 200),
                remoteHost: request.remoteHost?.logSafe(maximumLength: 200), tty: request.tty?.logSafe(maximumLength: 200)
            )
            let issuer = configuration.issuer
            approval = try await withTimeout(seconds: configuration.timeout) {
                try await embedded.approveHostLogin(issuer: issuer, clientID: configuration.clientID, request: hostRequest) { event in
                    guard case .code(let code) = event else { return }
                    show("To sign in as \(request.user.displaySafe(maximumLength: 64)), approve with your passkey on another device:")
                    show("  open \(code.verificationURIComplete?.absoluteString ?? code.verificationURI.absoluteString)")
                    show("  or run: latchkey approve \(code.userCode) --issuer \(issuer.absoluteString)")
                    if let complete = code.verificationURIComplete, let qr = try? QRCode(text: complete.absoluteString) {
                        show(qr.rendered())
                    }
                    if configuration.promptServices.contains(request.service) {
                        prompt?("Press Enter once you have approved: ")
                    }
                }
            }
        } catch is PAMTimeout {
            return .init(.authError, person: "No approval came in time.", log: "latchkey: \(who): no approval within \(configuration.timeout) s")
        } catch let error as LatchkeyError {
            switch error.code {
            case .deviceAccessDenied: return .init(.authError, person: "The sign-in was denied.", log: "latchkey: \(who): denied on the approving device")
            case .deviceCodeExpired:
                return .init(.authError, person: "No approval came in time.", log: "latchkey: \(who): the code expired before anyone approved it")
            case .network, .timeout: return .init(.unavailable, person: Self.unavailable, log: "latchkey: \(who): the provider cannot be reached: \(error.reason)")
            case .clientKeyMissing, .vault, .domainNotAllowed: return .init(.unavailable, person: Self.unavailable, log: "latchkey: \(who): \(error.reason)")
            case .providerError:
                // The provider refused the host itself (unknown client, a key it does not
                // know): the host is not enrolled there, so PAM may fall back.
                return .init(.unavailable, person: Self.unavailable, log: "latchkey: \(who): the provider refused this host: \(error.reason)")
            default: return .init(.authError, person: Self.failed, log: "latchkey: \(who): \(error.reason)")
            }
        } catch {
            return .init(.authError, person: Self.failed, log: "latchkey: \(who): \(error)")
        }
        guard allowed.contains(approval.username) else {
            return .init(.authError, person: "The approval was not made by someone allowed to use this account.",
                         log: "latchkey: \(who): approved by \(approval.username.displaySafe(maximumLength: 64)), who may not sign in as this account")
        }
        return .init(.success, person: nil, log: "latchkey: \(who): approved by \(approval.username.displaySafe(maximumLength: 64))")
    }

    /// `body`, or ``PAMTimeout`` once `seconds` have passed (the body is cancelled).
    static func withTimeout<T: Sendable>(seconds: Int, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: .seconds(seconds))
                throw PAMTimeout()
            }
            defer { group.cancelAll() }
            guard let first = try await group.next() else { throw PAMTimeout() }
            return first
        }
    }
}

/// No approval in the configured time.
struct PAMTimeout: Error {}

/// How one approval ended: the module's verdict, a line for the person at the login
/// (nothing on success; never the provider's words, which go to the journal only), and
/// the line for the journal.
struct PAMOutcome: Sendable {
    var verdict: PAMHelperSession.Verdict
    var person: String?
    var log: String

    init(_ verdict: PAMHelperSession.Verdict, person: String?, log: String) {
        self.verdict = verdict
        self.person = person
        self.log = log
    }
}
