import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyHost
import LatchkeyProtocol

extension LatchkeyCommand {
    /// `latchkey host pam-account`: what `pam_latchkey.so` runs in the account step, as
    /// root, speaking the helper protocol on stdin and stdout (docs/PROTOCOL.md section 13,
    /// "The module and its helper"; section 15).
    ///
    /// A local account (in `/etc/passwd`) is not this module's: `ignore`, before anything
    /// else is read, so a broken configuration or a stopped daemon never locks out root or
    /// any local user. A directory account may log in while the daemon serves it (its
    /// group has access to this host, the cache within the offline limit): `success`;
    /// otherwise `perm_denied`, and `authinfo_unavail` when the daemon cannot be asked.
    struct HostPAMAccount: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pam-account",
            abstract: "The account step pam_latchkey.so runs (a line protocol on stdin and stdout); not for people.",
            shouldDisplay: false
        )

        @Option(help: ArgumentHelp("The configuration.", valueName: "file"))
        var config: String = HostConfiguration.defaultPath

        func run() async throws {
            HostPAMStep.answer(config: config, HostPAMStep.account)
        }
    }

    /// `latchkey host pam-session`: the session step; a directory account's home is made
    /// from `/etc/skel` when missing (``HomeDirectory``).
    struct HostPAMSession: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pam-session",
            abstract: "The session step pam_latchkey.so runs (a line protocol on stdin and stdout); not for people.",
            shouldDisplay: false
        )

        @Option(help: ArgumentHelp("The configuration.", valueName: "file"))
        var config: String = HostConfiguration.defaultPath

        func run() async throws {
            HostPAMStep.answer(config: config, HostPAMStep.session)
        }
    }
}

/// The account and session steps' decisions, each a verdict and one journal line.
enum HostPAMStep {
    /// Reads the module's request and answers it with `decide`'s verdict and journal line;
    /// a malformed request is refused.
    static func answer(config: String, _ decide: (PAMHelperSession.Request, String) -> (PAMHelperSession.Verdict, String)) {
        var session = PAMHelperSession()
        do {
            let request = try session.readRequest()
            session.start()
            let (verdict, log) = decide(request, config)
            session.result(verdict, log)
        } catch {
            session.start()
            session.result(.permissionDenied, "latchkey: refused a malformed request from pam_latchkey: \(error)")
        }
    }

    /// The directory account `request.user`, or a verdict that ends the step first.
    private static func directoryAccount(_ request: PAMHelperSession.Request, config: String, step: String)
        -> Result<(UserDatabaseClient.Account, HostConfiguration), Refusal> {
        let who = "\(request.service.displaySafe(maximumLength: 64)) user \(request.user.displaySafe(maximumLength: 64))"
        if LocalAccounts.read().userNames.contains(request.user) {
            return .failure(Refusal(verdict: .ignore, log: "latchkey host: \(who) is a local account; left to the other modules"))
        }
        guard POSIXName.isValid(request.user) else {
            return .failure(Refusal(verdict: step == "account" ? .userUnknown : .ignore, log: "latchkey host: \(who) is not a POSIX name"))
        }
        let host: HostConfiguration
        do {
            host = try HostConfiguration.load(config)
        } catch {
            return .failure(Refusal(verdict: step == "account" ? .unavailable : .sessionError, log: "latchkey host: \(who): \(error)"))
        }
        do {
            guard let account = try UserDatabaseClient.account(named: request.user, socket: host.userDatabaseSocket) else {
                return .failure(Refusal(
                    verdict: step == "account" ? .permissionDenied : .ignore,
                    log: "latchkey host: \(who) is not an account this host's directory lets in"
                ))
            }
            return .success((account, host))
        } catch {
            return .failure(Refusal(verdict: step == "account" ? .unavailable : .sessionError, log: "latchkey host: \(who): \(error)"))
        }
    }

    struct Refusal: Error {
        var verdict: PAMHelperSession.Verdict
        var log: String
    }

    static func account(_ request: PAMHelperSession.Request, config: String) -> (PAMHelperSession.Verdict, String) {
        switch directoryAccount(request, config: config, step: "account") {
        case .failure(let refusal): return (refusal.verdict, refusal.log)
        case .success(let (account, _)):
            return (.success, "latchkey host: \(request.service.displaySafe(maximumLength: 64)) user \(account.userName) (uid \(account.uid)) is a directory account this host lets in")
        }
    }

    static func session(_ request: PAMHelperSession.Request, config: String) -> (PAMHelperSession.Verdict, String) {
        switch directoryAccount(request, config: config, step: "session") {
        case .failure(let refusal): return (refusal.verdict, refusal.log)
        case .success(let (account, host)):
            do {
                let made = try HomeDirectory.make(account.homeDirectory, uid: account.uid, gid: account.gid, homeBase: host.homeBase)
                return (.success, made ? "latchkey host: made \(account.homeDirectory) for \(account.userName) from /etc/skel" : "latchkey host: \(account.userName) has a home")
            } catch {
                return (.sessionError, "latchkey host: cannot make the home of \(account.userName): \(error)")
            }
        }
    }
}
