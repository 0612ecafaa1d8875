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
import LatchkeyProtocol
import LatchkeyLogging
import Logging

extension LatchkeyCommand {
    /// `latchkey agent`: unlock the vault once and let this user's other `latchkey`
    /// processes (and apps with `Embedded.Configuration.agentSocket`) use its keys over a
    /// Unix socket (docs/SECURITY.md, "The key agent"; the protocol: docs/PROTOCOL.md
    /// section 11). `--lock`, `--unlock`, `--stop` and `--status` talk to a running one.
    struct Agent: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "agent",
            abstract: "Hold the vault open for your other latchkey commands (unlock once), serving in the foreground on a Unix socket.",
            discussion: """
            Prints LATCHKEY_AGENT_SOCK=PATH; export LATCHKEY_AGENT_SOCK; for a shell to eval, then serves until stopped. \
            Commands that find $LATCHKEY_AGENT_SOCK use the agent instead of asking for the vault key; -v says which.
            """
        )

        @Option(help: ArgumentHelp("The socket (default: $LATCHKEY_AGENT_SOCK for --lock/--unlock/--stop/--status; else $XDG_RUNTIME_DIR/latchkey/agent.sock).", valueName: "path"))
        var socket: String?

        @Option(help: ArgumentHelp("The ssh-agent socket, for SSH_AUTH_SOCK: the vault's SSH keys and their certificates (latchkey ssh login) (default: beside --socket as NAME-ssh.sock, else $XDG_RUNTIME_DIR/latchkey/ssh-agent.sock).", valueName: "path"))
        var sshSocket: String?

        @Flag(help: "Serve no ssh-agent socket.")
        var noSshAgent = false

        @Option(help: ArgumentHelp("Lock after this long without a request (default 15m; 0 never). Units: s, m, h.", valueName: "duration"))
        var idleTimeout: String = "15m"

        @Option(help: ArgumentHelp("Lock this long after each unlock (default: never). Units: s, m, h.", valueName: "duration"))
        var lifetime: String?

        @Flag(help: "Answer root's processes too (only this user's by default).")
        var allowRoot = false

        @Flag(help: "Ask on this terminal before each signature (like ssh-add -c).")
        var confirm = false

        @Flag(help: "Start locked (no key asked now): for a service started at login; unlock with latchkey agent --unlock.")
        var locked = false

        @Flag(help: "Lock the running agent: it forgets the vault key.")
        var lock = false

        @Flag(help: "Unlock the running agent (asks for the passphrase of a passphrase vault).")
        var unlock = false

        @Flag(help: "Stop the running agent; it removes its socket.")
        var stop = false

        @Flag(help: "Show the running agent's state.")
        var status = false

        @OptionGroup var store: StoreOptions

        func validate() throws {
            guard [lock, unlock, stop, status].filter({ $0 }).count <= 1 else {
                throw ValidationError("give at most one of --lock, --unlock, --stop, --status")
            }
            _ = try Self.duration(idleTimeout, "--idle-timeout")
            if let lifetime { _ = try Self.duration(lifetime, "--lifetime") }
            if confirm, !lock, !unlock, !stop, !status, isatty(STDIN_FILENO) != 1 {
                throw ValidationError("--confirm asks on the agent's terminal: run it on one")
            }
        }

        /// `90`, `90s`, `15m`, `2h`; `0` is nil (never).
        static func duration(_ text: String, _ option: String) throws -> Duration? {
            let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600]
            var digits = Substring(text)
            var unit: Int64 = 1
            if let last = text.last, let factor = units[last] {
                digits = digits.dropLast()
                unit = factor
            }
            guard !digits.isEmpty, digits.count <= 7, digits.allSatisfy(\.isASCII), let value = Int64(digits), value >= 0 else {
                throw ValidationError("\(option) takes a duration such as 90s, 15m or 2h (0: never)")
            }
            return value == 0 ? nil : .seconds(value * unit)
        }

        func run() async throws {
            if lock || unlock || stop || status {
                try control()
                return
            }
            try await serve()
        }

        /// Talks to the running agent.
        private func control() throws {
            guard let path = socket ?? StoreOptions.agentSocket else {
                throw CommandFailure("no agent named: set LATCHKEY_AGENT_SOCK (as latchkey agent printed it) or pass --socket")
            }
            let connection = try KeyAgentConnection.connect(to: path)
            var state = try connection.status()
            if lock {
                state = try connection.lock()
            } else if unlock {
                var passphrase: String?
                if state.locked, state.passphraseToUnlock {
                    guard case .passphrase(let given, _) = try store.keySource() else {
                        throw CommandFailure("this agent's vault unlocks with its passphrase")
                    }
                    passphrase = given
                }
                state = try connection.unlock(passphrase: passphrase)
            } else if stop {
                try connection.stop()
                if store.json { try JSONOutput.print(["stopped": true]) } else { TextOutput.line("agent stopped") }
                return
            }
            if store.json {
                try JSONOutput.print(state)
            } else {
                TextOutput.line("agent pid \(state.pid) at \(TextOutput.field(path)): \(state.locked ? "locked" : "unlocked"), vault \(TextOutput.field(state.store))\(state.confirms ? ", confirms each signature" : "")")
            }
        }

        private func serve() async throws {
            var logger = Logger(label: "latchkey-agent") { TextLogHandler(label: $0) }
            logger.logLevel = ProcessInfo.processInfo.environment["LATCHKEY_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) ?? .notice
            // The vault key and unsealed private keys stay in locked memory where the
            // limits allow (docs/SECURITY.md, "The key agent").
            let locking = SecureMemory.lockSecrets()
            if !locking.locked { logger.notice("agent memory not locked", metadata: ["why": .string(locking.note)]) }

            let source: VaultKeySource? = locked ? nil : try store.keySource()
            var configuration = KeyAgent.Configuration(vaultDirectory: store.directory, reopenSource: Self.reopenSource(source, store), logger: logger)
            configuration.idleTimeout = try Self.duration(idleTimeout, "--idle-timeout")
            configuration.lifetime = try lifetime.flatMap { try Self.duration($0, "--lifetime") }
            configuration.allowsRoot = allowRoot
            if confirm { configuration.confirmation = AgentConfirmation.ask }
            let agent = try KeyAgent(configuration: configuration, openingWith: source)
            let path = try agent.listen(at: socket)
            // Beside a socket named on the command line (`agent.sock` → `agent-ssh.sock`), so
            // two agents with sockets of their own do not contend for the default one.
            let besideSocket = socket.map { PathText.removingExtension(of: $0) + "-ssh.sock" }
            let sshPath = noSshAgent ? nil : try agent.listenSSH(at: sshSocket ?? besideSocket)

            let stopping = Self.stopOnSignals(agent)
            defer { stopping.forEach { $0.cancel() } }
            if store.json {
                try JSONOutput.print(AgentStarted(socket: path, sshAuthSock: sshPath, pid: getpid(), locked: source == nil))
            } else {
                let quoted = Self.shellQuoted(path)
                var lines = "LATCHKEY_AGENT_SOCK=\(quoted); export LATCHKEY_AGENT_SOCK;\nLATCHKEY_AGENT_PID=\(getpid()); export LATCHKEY_AGENT_PID;\n"
                if let sshPath { lines += "SSH_AUTH_SOCK=\(Self.shellQuoted(sshPath)); export SSH_AUTH_SOCK;\n" }
                FileDescriptorIO.write(STDOUT_FILENO, lines)
            }
            // Nothing more goes to stdout: closing it lets `eval "$(latchkey agent --locked &)"`
            // read the lines and go on while the agent serves.
            let null = open("/dev/null", O_WRONLY)
            if null >= 0 {
                dup2(null, STDOUT_FILENO)
                close(null)
            }
            await agent.serve()
        }

        struct AgentStarted: Encodable {
            var socket: String
            var sshAuthSock: String?
            var pid: Int32
            var locked: Bool
        }

        /// What `unlock` may read again without the user: a TPM-sealed key or a systemd
        /// credential (a key file is not offered on the command line). Never a passphrase.
        static func reopenSource(_ source: VaultKeySource?, _ store: StoreOptions) -> VaultKeySource? {
            if store.vaultKey == .tpm { return .tpm }
            switch source {
            case .systemdCredential, .keyFile, .tpm: return source
            case nil:
                // Started locked: the systemd credential, when the unit loads one.
                if let credentials = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"], !credentials.isEmpty,
                   FileManager.default.fileExists(atPath: credentials + "/" + StoreOptions.systemdCredentialName) {
                    return .systemdCredential(name: StoreOptions.systemdCredentialName)
                }
                return nil
            default: return nil
            }
        }

        /// SIGINT, SIGTERM and SIGHUP stop the agent, which removes its socket.
        static func stopOnSignals(_ agent: KeyAgent) -> [any DispatchSourceSignal] {
            [SIGINT, SIGTERM, SIGHUP].map { number in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { agent.stop() }
                source.resume()
                return source
            }
        }

        /// `path` as one shell word.
        static func shellQuoted(_ path: String) -> String {
            let plain = path.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "/._-+:@%,".unicodeScalars.contains($0) }
            return plain ? path : "'" + path.replacing("'", with: "'\\''") + "'"
        }
    }
}
