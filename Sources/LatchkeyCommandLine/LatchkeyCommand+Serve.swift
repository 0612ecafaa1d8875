package import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto

extension LatchkeyCommand {
    /// `latchkey serve`: runs the reference identity provider until SIGINT or SIGTERM.
    package struct Serve: AsyncParsableCommand {
        package static let configuration = CommandConfiguration(commandName: "serve", abstract: "Run the reference identity provider.")

        @Option(help: "Address to listen on.")
        package var host = "127.0.0.1"

        @Option(help: "Port to listen on (0 picks a free one).")
        package var port = 8080

        @Option(help: ArgumentHelp("Serve the admin API, /metrics and the health probes on this address instead (host:port, e.g. 127.0.0.1:8081); the public listener then answers 404 for them.", valueName: "host:port"))
        package var adminListen: String?

        @Option(help: "Issuer URL, when it differs from http://<host>:<port> (behind a TLS proxy).")
        package var issuer: String?

        @Option(help: ArgumentHelp("File holding the admin API's bearer token (default: $LATCHKEY_ADMIN_TOKEN, the systemd credential latchkey-admin-token, else one made and kept in <data-dir>/admin-token). At least 128 bits by an estimate that reads repeats and sequences: make one with latchkey admin generate-token.", valueName: "file"))
        package var adminTokenFile: String?

        @OptionGroup package var store: ProviderStoreOptions

        @Option(help: "Requests per minute one client address may make to each code- or assertion-taking endpoint.")
        package var rateLimitPerMinute = 120

        @Option(name: .customLong("trusted-proxy"), help: ArgumentHelp("A proxy (address or CIDR, repeatable) whose --forwarded-header names the client; from anyone else it is ignored.", valueName: "cidr"))
        package var trustedProxies: [String] = []

        @Option(help: ArgumentHelp("The one header the trusted proxies name the client in: x-forwarded-for (nginx's $proxy_add_x_forwarded_for, HAProxy's option forwardfor) or forwarded (RFC 7239). The other is ignored.", valueName: "x-forwarded-for|forwarded"))
        package var forwardedHeader: ForwardedHeaderChoice = .xForwardedFor

        package enum ForwardedHeaderChoice: String, ExpressibleByArgument {
            case xForwardedFor = "x-forwarded-for"
            case forwarded
        }

        @Option(help: ArgumentHelp("The provider's name on its browser pages and in people's passkey prompts (at most 64 characters).", valueName: "name"))
        package var displayName = "Latchkey"

        @Option(help: ArgumentHelp("How mail leaves: outbox (kept for the admin API; the default without --smtp-url), smtp (--smtp-url) or sendmail (sendmail -t -i).", valueName: "outbox|smtp|sendmail"))
        package var mail: MailChoice?

        package enum MailChoice: String, ExpressibleByArgument {
            case outbox, smtp, sendmail
        }

        @Option(help: ArgumentHelp("SMTP server, smtp://[user@]host[:port] (STARTTLS when offered) or smtps://[user@]host[:port]. The password comes from --smtp-password-file, $LATCHKEY_SMTP_PASSWORD or the systemd credential latchkey-smtp-password.", valueName: "url"))
        package var smtpURL: String?

        @Option(help: ArgumentHelp("File holding the SMTP password.", valueName: "file"))
        package var smtpPasswordFile: String?

        @Option(help: ArgumentHelp("PEM file of certificates to trust for the SMTP server instead of the system's.", valueName: "file"))
        package var smtpCAFile: String?

        @Option(help: ArgumentHelp("The sendmail program for --mail sendmail.", valueName: "path"))
        package var sendmailPath = "/usr/sbin/sendmail"

        @Option(help: ArgumentHelp("Sender address of the provider's mail (required with smtp or sendmail).", valueName: "address"))
        package var mailFrom: String?

        @Flag(help: "Require a code e-mailed to the outbox before binding.")
        package var requireEmailCode = false

        @Flag(help: "Issue DPoP-bound tokens only: token requests without a DPoP proof (RFC 9449) are refused.")
        package var requireDpop = false

        @Flag(help: "Require DPoP proofs to carry a nonce the provider hands out in DPoP-Nonce (RFC 9449 §8).")
        package var requireDpopNonce = false

        package enum ClientMetadataDocumentsChoice: String, ExpressibleByArgument {
            case allow, deny
        }

        @Option(help: ArgumentHelp("Take an https URL as client_id and fetch the client's metadata from it (client ID metadata documents, for MCP clients): allow or deny (default).", valueName: "allow|deny"))
        package var clientMetadataDocuments: ClientMetadataDocumentsChoice = .deny

        @Option(name: .customLong("client-metadata-host"), help: ArgumentHelp("The only hosts client metadata documents are fetched from (repeatable; default any host with a public address).", valueName: "host"))
        package var clientMetadataHosts: [String] = []

        @Flag(help: "Fetch client metadata documents from loopback and private addresses too, and over http from loopback: for tests and a developer's machine only.")
        package var clientMetadataLocalNetwork = false

        package enum ClientRegistrationChoice: String, ExpressibleByArgument {
            case off, open, token
        }

        @Option(help: ArgumentHelp("Dynamic client registration (RFC 7591) at /register: off (default), open (rate-limited per address), or token (only with the initial access token in --client-registration-token-file).", valueName: "off|open|token"))
        package var clientRegistration: ClientRegistrationChoice = .off

        @Option(help: ArgumentHelp("File holding the initial access token for --client-registration token (mode 0600 or stricter).", valueName: "file"))
        package var clientRegistrationTokenFile: String?

        @Flag(help: "Allow self-service sign-up (POST /v1/signup).")
        package var allowSignup = false

        @Option(name: .customLong("reserve-username"), help: ArgumentHelp("A name no identity may take and no username becomes as an SSH principal, beyond root and Debian's system accounts and groups (repeatable).", valueName: "name"))
        package var reservedUsernames: [String] = []

        @Option(help: ArgumentHelp("Where POSIX user and group IDs are allocated (default 65536-99999, clear of Debian's, systemd's and useradd's subordinate ranges; a range overlapping them is refused).", valueName: "FIRST-LAST"))
        package var posixUidRange: String?

        @Flag(help: "Turn off account recovery by e-mailed code.")
        package var disableRecovery = false

        @Flag(help: "Run an attestation CA: issue AIK certificates to TPMs whose endorsement key certificate chains to --ek-roots, after credential activation (GET /v1/attestation/roots publishes its root).")
        package var attestationCa = false

        @Option(help: ArgumentHelp("PEM file of the TPM makers' CA certificates (roots and intermediates) that endorsement key certificates must chain to, for --attestation-ca.", valueName: "file"))
        package var ekRoots: String?

        @Option(help: ArgumentHelp("Refuse every registration without this attestation (tpm: WebAuthn tpm attestation chained to --attestation-roots or this provider's own --attestation-ca root).", valueName: "tpm"))
        package var requireAttestation: String?

        @Option(help: ArgumentHelp("PEM file of attestation CA roots whose AIK certificates tpm attestation may chain to (this provider's own CA root is trusted too with --attestation-ca).", valueName: "file"))
        package var attestationRoots: String?

        @Flag(help: "Run an SSH CA: sign short-lived OpenSSH certificates for access tokens of scope ssh (GET /v1/ssh/ca publishes its key, GET /v1/ssh/krl its revocation list).")
        package var sshCa = false

        @Option(help: ArgumentHelp("How long an SSH certificate lasts unless the request asks for less (a number and s, m, h or d; default 8h, at most 24h).", valueName: "duration"))
        package var sshCertificateLifetime: String = "8h"

        @Option(help: ArgumentHelp("The force-command critical option every SSH user certificate carries.", valueName: "command"))
        package var sshForceCommand: String?

        @Option(help: ArgumentHelp("The source-address critical option every SSH user certificate carries (comma-separated CIDR list).", valueName: "list"))
        package var sshSourceAddress: String?

        @Option(help: ArgumentHelp("Certify only SSH keys proved to live in a TPM (tpm: TPM2_Certify of the key over each request, by an attestation key chained to --attestation-roots or this provider's --attestation-ca root).", valueName: "tpm"))
        package var sshRequireAttestation: String?

        @Option(help: ArgumentHelp("How long audit events are kept (a number and s, m, h or d; default 90d). Older whole checkpointed segments are pruned.", valueName: "duration"))
        package var auditRetention: String = "90d"

        @Flag(help: "Keep no audit log (only to measure what it costs).")
        package var noAudit = false

        @Flag(help: "Copy each audit event to the systemd journal as structured fields (LATCHKEY_AUDIT_TYPE=…).")
        package var auditSyslog = false

        @Flag(help: "Print the issuer and where the admin token is as one JSON line once listening.")
        package var json = false

        @Option(help: ArgumentHelp("Logs on standard error as text, or as one JSON object a line with a request_id.", valueName: "text|json"))
        package var logFormat: LogFormat = .text

        package enum LogFormat: String, ExpressibleByArgument {
            case text
            case json
        }

        package init() {}

        /// The provider runs in `latchkey-provider` (``ProviderCommands``).
        package func run() async throws {
            try await ProviderCommands.runner().serve(self)
        }
    }
}
