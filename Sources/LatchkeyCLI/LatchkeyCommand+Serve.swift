import ArgumentParser
import Foundation
import Hummingbird
import LatchkeyCrypto
import LatchkeyIdP
import Logging

extension LatchkeyCommand {
    /// `latchkey serve`: runs the reference identity provider until SIGINT or SIGTERM.
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "serve", abstract: "Run the reference identity provider.")

        @Option(help: "Address to listen on.")
        var host = "127.0.0.1"

        @Option(help: "Port to listen on (0 picks a free one).")
        var port = 8080

        @Option(help: ArgumentHelp("Serve the admin API, /metrics and the health probes on this address instead (host:port, e.g. 127.0.0.1:8081); the public listener then answers 404 for them.", valueName: "host:port"))
        var adminListen: String?

        @Option(help: "Issuer URL, when it differs from http://<host>:<port> (behind a TLS proxy).")
        var issuer: String?

        @Option(help: ArgumentHelp("File holding the admin API's bearer token (default: $LATCHKEY_ADMIN_TOKEN, the systemd credential latchkey-admin-token, else one made and kept in <data-dir>/admin-token). At least 128 bits by an estimate that reads repeats and sequences: make one with latchkey admin generate-token.", valueName: "file"))
        var adminTokenFile: String?

        @OptionGroup var store: ProviderStoreOptions

        @Option(help: "Requests per minute one client address may make to each code- or assertion-taking endpoint.")
        var rateLimitPerMinute = 120

        @Option(name: .customLong("trusted-proxy"), help: ArgumentHelp("A proxy (address or CIDR, repeatable) whose --forwarded-header names the client; from anyone else it is ignored.", valueName: "cidr"))
        var trustedProxies: [String] = []

        @Option(help: ArgumentHelp("The one header the trusted proxies name the client in: x-forwarded-for (nginx's $proxy_add_x_forwarded_for, HAProxy's option forwardfor) or forwarded (RFC 7239). The other is ignored.", valueName: "x-forwarded-for|forwarded"))
        var forwardedHeader: ForwardedHeaderChoice = .xForwardedFor

        enum ForwardedHeaderChoice: String, ExpressibleByArgument {
            case xForwardedFor = "x-forwarded-for"
            case forwarded
        }

        @Option(help: ArgumentHelp("The provider's name on its browser pages and in people's passkey prompts (at most 64 characters).", valueName: "name"))
        var displayName = "Latchkey"

        @Option(help: ArgumentHelp("How mail leaves: outbox (kept for the admin API; the default without --smtp-url), smtp (--smtp-url) or sendmail (sendmail -t -i).", valueName: "outbox|smtp|sendmail"))
        var mail: MailChoice?

        enum MailChoice: String, ExpressibleByArgument {
            case outbox, smtp, sendmail
        }

        @Option(help: ArgumentHelp("SMTP server, smtp://[user@]host[:port] (STARTTLS when offered) or smtps://[user@]host[:port]. The password comes from --smtp-password-file, $LATCHKEY_SMTP_PASSWORD or the systemd credential latchkey-smtp-password.", valueName: "url"))
        var smtpURL: String?

        @Option(help: ArgumentHelp("File holding the SMTP password.", valueName: "file"))
        var smtpPasswordFile: String?

        @Option(help: ArgumentHelp("PEM file of certificates to trust for the SMTP server instead of the system's.", valueName: "file"))
        var smtpCAFile: String?

        @Option(help: ArgumentHelp("The sendmail program for --mail sendmail.", valueName: "path"))
        var sendmailPath = "/usr/sbin/sendmail"

        @Option(help: ArgumentHelp("Sender address of the provider's mail (required with smtp or sendmail).", valueName: "address"))
        var mailFrom: String?

        @Flag(help: "Require a code e-mailed to the outbox before binding.")
        var requireEmailCode = false

        @Flag(help: "Issue DPoP-bound tokens only: token requests without a DPoP proof (RFC 9449) are refused.")
        var requireDpop = false

        @Flag(help: "Require DPoP proofs to carry a nonce the provider hands out in DPoP-Nonce (RFC 9449 §8).")
        var requireDpopNonce = false

        @Flag(help: "Allow self-service sign-up (POST /v1/signup).")
        var allowSignup = false

        @Option(name: .customLong("reserve-username"), help: ArgumentHelp("A name no identity may take and no username becomes as an SSH principal, beyond root and Debian's system accounts and groups (repeatable).", valueName: "name"))
        var reservedUsernames: [String] = []

        @Option(help: ArgumentHelp("Where POSIX user and group IDs are allocated (default 65536-99999, clear of Debian's, systemd's and useradd's subordinate ranges; a range overlapping them is refused).", valueName: "FIRST-LAST"))
        var posixUidRange: String?

        @Flag(help: "Turn off account recovery by e-mailed code.")
        var disableRecovery = false

        @Flag(help: "Run an attestation CA: issue AIK certificates to TPMs whose endorsement key certificate chains to --ek-roots, after credential activation (GET /v1/attestation/roots publishes its root).")
        var attestationCa = false

        @Option(help: ArgumentHelp("PEM file of the TPM makers' CA certificates (roots and intermediates) that endorsement key certificates must chain to, for --attestation-ca.", valueName: "file"))
        var ekRoots: String?

        @Option(help: ArgumentHelp("Refuse every registration without this attestation (tpm: WebAuthn tpm attestation chained to --attestation-roots or this provider's own --attestation-ca root).", valueName: "tpm"))
        var requireAttestation: String?

        @Option(help: ArgumentHelp("PEM file of attestation CA roots whose AIK certificates tpm attestation may chain to (this provider's own CA root is trusted too with --attestation-ca).", valueName: "file"))
        var attestationRoots: String?

        @Flag(help: "Run an SSH CA: sign short-lived OpenSSH certificates for access tokens of scope ssh (GET /v1/ssh/ca publishes its key, GET /v1/ssh/krl its revocation list).")
        var sshCa = false

        @Option(help: ArgumentHelp("How long an SSH certificate lasts unless the request asks for less (a number and s, m, h or d; default 8h, at most 24h).", valueName: "duration"))
        var sshCertificateLifetime: String = "8h"

        @Option(help: ArgumentHelp("The force-command critical option every SSH user certificate carries.", valueName: "command"))
        var sshForceCommand: String?

        @Option(help: ArgumentHelp("The source-address critical option every SSH user certificate carries (comma-separated CIDR list).", valueName: "list"))
        var sshSourceAddress: String?

        @Option(help: ArgumentHelp("Certify only SSH keys proved to live in a TPM (tpm: TPM2_Certify of the key over each request, by an attestation key chained to --attestation-roots or this provider's --attestation-ca root).", valueName: "tpm"))
        var sshRequireAttestation: String?

        @Option(help: ArgumentHelp("How long audit events are kept (a number and s, m, h or d; default 90d). Older whole checkpointed segments are pruned.", valueName: "duration"))
        var auditRetention: String = "90d"

        @Flag(help: "Keep no audit log (only to measure what it costs).")
        var noAudit = false

        @Flag(help: "Copy each audit event to the systemd journal as structured fields (LATCHKEY_AUDIT_TYPE=…).")
        var auditSyslog = false

        @Flag(help: "Print the issuer and where the admin token is as one JSON line once listening.")
        var json = false

        @Option(help: ArgumentHelp("Logs on standard error as text, or as one JSON object a line with a request_id.", valueName: "text|json"))
        var logFormat: LogFormat = .text

        enum LogFormat: String, ExpressibleByArgument {
            case text
            case json
        }

        /// The certificates of a PEM file named by `option`.
        static func certificates(_ path: String, option: String) throws -> [X509Certificate] {
            let contents: Data
            do {
                contents = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw ValidationError("\(option) \(path) cannot be read: \(error.localizedDescription)")
            }
            do {
                return try X509Certificate.certificates(pem: contents)
            } catch {
                throw ValidationError("\(option) \(path) is not a PEM file of certificates: \(error)")
            }
        }

        func run() async throws {
            switch logFormat {
            case .json: LoggingSystem.bootstrap { JSONLogHandler(label: $0) }
            case .text: LoggingSystem.bootstrap { TextLogHandler(label: $0) }
            }
            let (token, tokenOrigin) = try AdminToken.forServe(file: adminTokenFile, dataDirectory: store.database == nil ? store.dataDir.map { URL(fileURLWithPath: $0) } : nil)
            var configuration = ProviderConfiguration(host: host, port: port, issuer: try issuer.map(Self.parseIssuer), adminToken: token)
            try store.configure(&configuration)
            guard rateLimitPerMinute > 0 else { throw ValidationError("--rate-limit-per-minute must be positive") }
            configuration.rateLimitPerMinute = rateLimitPerMinute
            configuration.auditRetention = try ListEvents.duration(auditRetention)
            guard configuration.auditRetention >= 3600 else { throw ValidationError("--audit-retention must be at least 1h") }
            configuration.auditLog = !noAudit
            if auditSyslog {
                guard !noAudit else { throw ValidationError("--audit-syslog copies the audit log: not with --no-audit") }
                configuration.auditJournalSocket = "/run/systemd/journal/socket"
            }
            configuration.trustedProxies = try trustedProxies.map { text in
                guard let network = IPNetwork(text) else { throw ValidationError("--trusted-proxy \(text) is not an address or CIDR network") }
                return network
            }
            configuration.forwardedHeader = forwardedHeader == .forwarded ? .forwarded : .xForwardedFor
            configuration.adminListener = try adminListen.map(Self.parseListener)
            configuration.mail = try mailSettings()
            configuration.requireEmailCodeForBinding = requireEmailCode
            configuration.requiresDPoP = requireDpop
            configuration.requiresDPoPNonce = requireDpopNonce
            configuration.selfRegistration = allowSignup
            configuration.recovery = !disableRecovery
            for name in reservedUsernames where name.isEmpty || name.utf8.count > 256 || name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                throw ValidationError("--reserve-username: 1 to 256 bytes without control characters")
            }
            configuration.reservedUsernames = ReservedUsernames(adding: reservedUsernames)
            if let posixUidRange {
                do {
                    configuration.posixIDRange = try POSIXIDRange(parsing: posixUidRange)
                } catch {
                    throw ValidationError("--posix-uid-range: \(error.reason)")
                }
            }
            let name = displayName.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !name.isEmpty, name.count <= 64, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw ValidationError("--display-name must be 1 to 64 characters, none of them control characters")
            }
            configuration.displayName = name
            configuration.attestationAuthority = attestationCa
            configuration.sshAuthority = sshCa
            configuration.sshCertificateLifetime = try ListEvents.duration(sshCertificateLifetime)
            guard (60...ProviderConfiguration.maximumSSHCertificateLifetime).contains(configuration.sshCertificateLifetime) else {
                throw ValidationError("--ssh-certificate-lifetime must be from 1m to 24h")
            }
            // sshd refuses every certificate whose options it cannot read: check them here.
            if let sshForceCommand, sshForceCommand.isEmpty || sshForceCommand.utf8.count > 1024 || sshForceCommand.contains(where: \.isNewline) {
                throw ValidationError("--ssh-force-command: one line of at most 1024 bytes")
            }
            if let sshSourceAddress {
                let networks = sshSourceAddress.split(separator: ",", omittingEmptySubsequences: false)
                guard !networks.isEmpty, networks.count <= 64, networks.allSatisfy({ IPNetwork(String($0)) != nil }) else {
                    throw ValidationError("--ssh-source-address: a comma-separated list of addresses or CIDR networks (10.0.0.0/8,fd00::/8)")
                }
            }
            configuration.sshForceCommand = sshForceCommand
            configuration.sshSourceAddress = sshSourceAddress
            if let ekRoots {
                guard attestationCa else { throw ValidationError("--ek-roots is for --attestation-ca") }
                configuration.endorsementRoots = try Self.certificates(ekRoots, option: "--ek-roots")
            }
            if let attestationRoots {
                configuration.attestationRoots = try Self.certificates(attestationRoots, option: "--attestation-roots")
            }
            if let requireAttestation {
                guard let requirement = AttestationRequirement(rawValue: requireAttestation) else {
                    throw ValidationError("--require-attestation takes tpm")
                }
                guard attestationCa || !configuration.attestationRoots.isEmpty else {
                    throw ValidationError("--require-attestation tpm needs roots to check attestation against: --attestation-ca, or --attestation-roots FILE.pem")
                }
                configuration.requiredAttestation = requirement
            }
            if let sshRequireAttestation {
                guard let requirement = AttestationRequirement(rawValue: sshRequireAttestation) else {
                    throw ValidationError("--ssh-require-attestation takes tpm")
                }
                guard sshCa else { throw ValidationError("--ssh-require-attestation is for --ssh-ca") }
                guard attestationCa || !configuration.attestationRoots.isEmpty else {
                    throw ValidationError("--ssh-require-attestation tpm needs roots to check attestation against: --attestation-ca, or --attestation-roots FILE.pem")
                }
                configuration.sshRequiredAttestation = requirement
            }
            let ready = ServeReadiness(json: json, adminToken: token, origin: tokenOrigin, expectsAdminListener: configuration.adminListener != nil)
            let app = try await buildApplication(
                configuration: configuration,
                onServerRunning: { issuer in await ready.listening(issuer: issuer) },
                onAdminServerRunning: { admin in await ready.listening(admin: admin) }
            )
            // Stops cleanly on SIGINT and SIGTERM.
            try await app.runService()
        }

        /// The mail transport asked for; secrets from a file, the environment or a
        /// credential, never argv.
        func mailSettings() throws -> ProviderConfiguration.Mail? {
            let choice = mail ?? (smtpURL == nil ? .outbox : .smtp)
            if choice == .outbox {
                guard smtpURL == nil else { throw ValidationError("--smtp-url needs --mail smtp (or no --mail)") }
                return nil
            }
            guard let mailFrom else { throw ValidationError("--mail \(choice.rawValue) needs --mail-from ADDRESS") }
            switch choice {
            case .smtp:
                guard let smtpURL else { throw ValidationError("--mail smtp needs --smtp-url") }
                let password = try SecretFile.password(file: smtpPasswordFile, credential: "latchkey-smtp-password", environment: "LATCHKEY_SMTP_PASSWORD")
                return .init(transport: .smtp(url: smtpURL, password: password, trustedCertificatesFile: smtpCAFile), from: mailFrom)
            default:
                return .init(transport: .sendmail(path: sendmailPath), from: mailFrom)
            }
        }

        /// An issuer is https, or plain http on a loopback host only (RFC 8252 §8.3): codes,
        /// tokens and assertions would otherwise cross the network in clear, and clients
        /// refuse such an issuer anyway.
        static func parseIssuer(_ text: String) throws -> URL {
            let url = try parseURL(text)
            guard url.scheme?.lowercased() == "https" || (url.scheme?.lowercased() == "http" && LoopbackHost.contains(url.host ?? "")) else {
                throw ValidationError("--issuer \(text) must be https (plain http only on a loopback host)")
            }
            return url
        }

        /// `host:port` or `[v6]:port`.
        static func parseListener(_ text: String) throws -> ProviderConfiguration.Listener {
            guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
                throw ValidationError("--admin-listen \(text) is not host:port")
            }
            let host = String(text[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            guard !host.isEmpty else { throw ValidationError("--admin-listen \(text) names no host") }
            return ProviderConfiguration.Listener(host: host, port: port)
        }

        static func parseURL(_ text: String) throws -> URL {
            guard let url = URL(string: text), url.scheme != nil, url.host != nil else {
                throw ValidationError("\(text) is not an absolute URL")
            }
            return url
        }
    }
}
