import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Glibc
import Latchkey
import LatchkeyCrypto
import LatchkeyHost
import LatchkeyProtocol
import LatchkeyLogging
import Logging

extension LatchkeyCommand {
    /// `latchkey host …`: this host's copy of the provider's directory, so `getent`, `id`,
    /// `sshd`, `sudo` and `ls` know the fleet's people through NSS (docs/guides/fleet.md; docs/PROTOCOL.md section 15).
    struct Host: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "host",
            abstract: "Serve the provider's directory of accounts and groups to this host's NSS (systemd userdb), offline too.",
            subcommands: [HostEnroll.self, HostRun.self, HostStatusCommand.self, HostSync.self, HostPrincipals.self, HostPAMAccount.self, HostPAMSession.self]
        )
    }

    /// `latchkey host enroll --issuer URL --client-id HOST`.
    struct HostEnroll: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "enroll",
            abstract: "Make this host's client key (the vault pam enroll uses) and /etc/latchkey/host.conf; print the JWK Set to register."
        )

        @OptionGroup var enrollment: HostEnrollmentOptions

        @Option(help: ArgumentHelp("Where the configuration goes.", valueName: "file"))
        var config: String = HostConfiguration.defaultPath

        @Option(help: ArgumentHelp("Where the daemon keeps its cache.", valueName: "directory"))
        var stateDir: String = HostConfiguration.defaultStateDirectory

        @Option(help: ArgumentHelp("The IDs this host takes from the directory (the provider's --posix-uid-range).", valueName: "first-last"))
        var idRange: String = "65536-99999"

        @Option(help: ArgumentHelp("A sudoers drop-in the daemon keeps for the directory's sudo groups.", valueName: "file"))
        var sudoersFile: String?

        @Option(help: ArgumentHelp("Where the daemon keeps the provider's SSH CA keys, for sshd's TrustedUserCAKeys.", valueName: "file"))
        var sshCAFile: String = "/etc/ssh/latchkey_ca.pub"

        @Option(help: ArgumentHelp("Where the daemon keeps the provider's SSH KRL, for sshd's RevokedKeys.", valueName: "file"))
        var sshKRLFile: String = "/etc/ssh/latchkey.krl"

        @Option(help: ArgumentHelp("The userdb service name: the socket /run/systemd/userdb/NAME.", valueName: "name"))
        var userdbService: String = HostConfiguration.defaultService

        func validate() throws {
            guard HostConfiguration.isServiceName(userdbService) else { throw ValidationError("--userdb-service is a plain name such as io.latchkey") }
            guard HostConfiguration.idRange(idRange) != nil else { throw ValidationError("--id-range: FIRST-LAST outside every range a host keeps, such as 65536-99999") }
            let paths = [("--config", config), ("--state-dir", stateDir), ("--ssh-ca-file", sshCAFile), ("--ssh-krl-file", sshKRLFile)]
            for (name, path) in paths + (sudoersFile.map { [("--sudoers-file", $0)] } ?? []) where !path.hasPrefix("/") {
                throw ValidationError("\(name) must be an absolute path")
            }
        }

        func run() async throws {
            var configuration = HostConfiguration(
                issuer: try enrollment.issuerURL(), clientID: enrollment.clientID, vault: enrollment.vaultURL, vaultKeyFile: enrollment.vaultKeyURL
            )
            configuration.stateDirectory = stateDir
            configuration.idRange = HostConfiguration.idRange(idRange) ?? configuration.idRange
            configuration.sudoersFile = sudoersFile
            configuration.sshCAFile = sshCAFile
            configuration.sshKRLFile = sshKRLFile
            configuration.userDatabaseService = userdbService
            let (written, key) = try await HostVault.enroll(configuration, at: config, keyProtection: try enrollment.protection.setting())
            configuration = written
            HostVault.printRegistration(
                key, issuer: configuration.issuer, clientID: configuration.clientID, config: config, register: "--grant client_credentials --scope host",
                then: ["latchkey admin set-host-labels --idp \(configuration.issuer.absoluteString) --client-id \(configuration.clientID) web   # the host's labels"]
            )
        }
    }

    /// `latchkey host run`: the daemon, in the foreground (for systemd).
    struct HostRun: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "run",
            abstract: "Sync the directory and answer NSS lookups (systemd userdb) until stopped; run as root, one per host."
        )

        @Option(help: ArgumentHelp("The configuration.", valueName: "file"))
        var config: String = HostConfiguration.defaultPath

        @Option(help: ArgumentHelp("Where the cache is kept (default: the configuration's state-dir).", valueName: "directory"))
        var stateDir: String?

        @Option(help: ArgumentHelp("The userdb service name: the socket /run/systemd/userdb/NAME (default io.latchkey).", valueName: "name"))
        var userdbService: String?

        @Option(help: ArgumentHelp("Seconds between syncs (default: the configuration's, else 60).", valueName: "seconds"))
        var interval: Int?

        @Option(help: ArgumentHelp("Seconds the cache answers for accounts with the provider away (default 604800, 7 days).", valueName: "seconds"))
        var offlineMaxAge: Int?

        @Option(help: ArgumentHelp("text or json log lines on stderr (the journal under systemd).", valueName: "format"))
        var logFormat: Serve.LogFormat = .text

        func validate() throws {
            if let userdbService, !HostConfiguration.isServiceName(userdbService) { throw ValidationError("--userdb-service is a plain name such as io.latchkey") }
            if let interval, !(1...86400).contains(interval) { throw ValidationError("--interval is 1 to 86400 seconds") }
            if let offlineMaxAge, !(1...(366 * 86400)).contains(offlineMaxAge) { throw ValidationError("--offline-max-age is 1 to 31622400 seconds") }
            if let stateDir, !stateDir.hasPrefix("/") { throw ValidationError("--state-dir must be an absolute path") }
        }

        func run() async throws {
            var host = try HostConfiguration.load(config)
            if let stateDir { host.stateDirectory = stateDir }
            if let userdbService { host.userDatabaseService = userdbService }
            if let interval { host.interval = interval }
            if let offlineMaxAge { host.offlineMaxAge = offlineMaxAge }
            if let tpm = host.tpm { setenv(TPM.locationVariable, tpm, 1) }
            var logger = Logger(label: "latchkey-host") { label in
                logFormat == .json ? JSONLogHandler(label: label) as any LogHandler : TextLogHandler(label: label) as any LogHandler
            }
            logger.logLevel = .info
            let embedded = try HostVault.embedded(
                issuer: host.issuer, vault: host.vault, vaultKeyFile: host.vaultKeyFile, cachesTokens: true, logger: HostVault.quietLogger("latchkey-host")
            )
            var settings = HostDaemon.Configuration(
                issuer: host.issuer, clientID: host.clientID, embedded: embedded, stateDirectory: URL(fileURLWithPath: host.stateDirectory), logger: logger
            )
            settings.userDatabaseService = host.userDatabaseService
            settings.controlSocket = host.controlSocket
            settings.interval = TimeInterval(host.interval)
            settings.offlineMaxAge = TimeInterval(host.offlineMaxAge)
            settings.idRange = host.idRange
            settings.homeBase = host.homeBase
            settings.sudoersFile = host.sudoersFile
            settings.sshCAFile = host.sshCAFile
            settings.sshKRLFile = host.sshKRLFile
            let daemon = HostDaemon(configuration: settings)
            let sources = [SIGINT, SIGTERM, SIGHUP].map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { daemon.stop() }
                source.resume()
                return source
            }
            defer { sources.forEach { $0.cancel() } }
            do {
                try await daemon.run()
            } catch let error as HostError {
                throw CommandFailure(error.reason)
            }
        }
    }

    /// `latchkey host status [--json]`.
    struct HostStatusCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Show the last sync, the cache's age, what is served and whether the provider answered."
        )

        @Option(help: ArgumentHelp("The configuration.", valueName: "file"))
        var config: String = HostConfiguration.defaultPath

        @Flag(help: "Print the status as JSON.")
        var json = false

        func run() async throws {
            let host = try HostConfiguration.load(config)
            var status: HostStatus
            var running = true
            do {
                status = try HostControl.status(socket: host.controlSocket)
            } catch {
                running = false
                guard let written = HostStatus.lastWritten(in: URL(fileURLWithPath: host.stateDirectory)) else {
                    throw CommandFailure("the host daemon is not running and has never synced (no \(host.stateDirectory)/status.json)")
                }
                status = written
                status.daemonPID = nil
            }
            try Self.print(status, json: json, running: running)
            if !running { throw ExitCode(3) }
        }

        /// As JSON, or as lines for a person.
        static func print(_ status: HostStatus, json: Bool, running: Bool) throws {
            guard !json else { return TextOutput.line(String(decoding: try status.json(), as: UTF8.self)) }
            let when = { (date: Date?) in date.map { $0.formatted(.iso8601) } ?? "never" }
            TextOutput.line("daemon: \(running ? "running (pid \(status.daemonPID.map(String.init) ?? "?"))" : "not running (last status written shown)")")
            TextOutput.line("provider: \(TextOutput.field(status.issuer)) as \(TextOutput.field(status.clientID)), \(status.providerReachable ? "reachable" : "not reachable")")
            TextOutput.line("last sync: \(when(status.lastSync))\(status.cacheAge.map { " (\($0) s ago)" } ?? "")")
            if let error = status.lastError { TextOutput.line("last error: \(TextOutput.field(error))") }
            TextOutput.line("directory version: \(status.version.map { TextOutput.field($0) } ?? "none")")
            TextOutput.line("serving: \(status.accountsServed) accounts, \(status.groupsServed) groups\(status.servingAccounts ? "" : " (accounts stopped: cache older than the offline limit)")")
            TextOutput.line("refused: \(status.refused), clashes with local accounts: \(status.clashes)")
            TextOutput.line("socket: \(status.userDatabaseSocket)")
        }
    }

    /// `latchkey host sync --now`.
    struct HostSync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sync",
            abstract: "Make the running daemon sync now, and show the status after."
        )

        @Option(help: ArgumentHelp("The configuration.", valueName: "file"))
        var config: String = HostConfiguration.defaultPath

        @Flag(help: "Sync now rather than at the next interval (the only way there is).")
        var now = false

        @Flag(help: "Print the status as JSON.")
        var json = false

        func run() async throws {
            let host = try HostConfiguration.load(config)
            let status: HostStatus
            do {
                status = try HostControl.syncNow(socket: host.controlSocket)
            } catch let error as HostError {
                throw CommandFailure(error.reason)
            }
            try HostStatusCommand.print(status, json: json, running: true)
            if status.lastError != nil { throw ExitCode(1) }
        }
    }

    /// `latchkey host principals USER`: sshd's `AuthorizedPrincipalsCommand`.
    struct HostPrincipals: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "principals",
            abstract: "For sshd's AuthorizedPrincipalsCommand: print the certificate principal that may log in as USER (a directory account), or nothing."
        )

        @Argument(help: "The account sshd asks about (%u).")
        var user: String

        @Option(help: ArgumentHelp("The configuration.", valueName: "file"))
        var config: String = HostConfiguration.defaultPath

        func run() async throws {
            // Only a POSIX name can be a directory account; anything else gets no principal.
            guard POSIXName.isValid(user) else { return }
            let host = try HostConfiguration.load(config)
            do {
                if let account = try UserDatabaseClient.account(named: user, socket: host.userDatabaseSocket) {
                    TextOutput.line(account.userName)
                }
            } catch let error as HostError {
                throw CommandFailure(error.reason)
            }
        }
    }
}
