public import Foundation
public import Logging
public import LatchkeyCrypto

/// How a reference identity provider is set up.
public struct ProviderConfiguration: Sendable {
    /// A registered OAuth client (RFC 6749 §2).
    public struct Client: Sendable, Hashable {
        public var id: String
        /// Redirect URIs, compared exactly (RFC 6749 §3.1.2.2, RFC 9700 §4.1.3). For
        /// loopback redirects the port may vary (RFC 8252 §7.3).
        public var redirectURIs: [String]

        public init(id: String, redirectURIs: [String]) {
            self.id = id
            self.redirectURIs = redirectURIs
        }
    }

    /// The default public client of the `latchkey` command.
    public static let cliClient = Client(id: "latchkey-cli", redirectURIs: ["http://127.0.0.1/callback"])

    /// Address to listen on; port 0 picks a free one (tests).
    public var host: String
    public var port: Int
    /// A second listener for the admin API, `/metrics` and the health probes
    /// (`serve --admin-listen`), after Ory Hydra's split of public and admin ports: the
    /// public listener then answers 404 for them. Nil keeps them on the public listener.
    public var adminListener: Listener?

    /// An address and port to listen on (0 picks a free port).
    public struct Listener: Sendable, Hashable {
        public var host: String
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// Whether the host is a loopback address or `localhost`.
        public var isLoopback: Bool {
            LoopbackHost.contains(host)
        }
    }
    /// The issuer URL; when nil, `http://<host>:<bound port>` once listening.
    public var issuer: URL?
    /// Bearer token for the admin API.
    public var adminToken: String
    public var clients: [Client]
    /// Lifetimes.
    public var bindJobLifetime: TimeInterval = 3600
    public var authorizationCodeLifetime: TimeInterval = 60
    public var accessTokenLifetime: TimeInterval = 600
    /// Refuses token requests without a DPoP proof (RFC 9449), so every token it issues
    /// is bound to a key its client holds (`serve --require-dpop`).
    public var requiresDPoP = false
    /// Requires DPoP proofs to carry a nonce this provider handed out (RFC 9449 §8, §9;
    /// `serve --require-dpop-nonce`): a proof made in advance by whoever briefly held the
    /// key stops working within ten minutes.
    public var requiresDPoPNonce = false
    /// Refresh tokens rotate on every use (RFC 9700 §4.14.2) and die when the grant
    /// reaches its absolute lifetime, or when unused for the idle lifetime.
    public var refreshTokenAbsoluteLifetime: TimeInterval = 30 * 86400
    public var refreshTokenIdleLifetime: TimeInterval = 7 * 86400
    /// Live grants (sign-ins with their refresh token) one identity keeps per client; the
    /// oldest is revoked when a new one would exceed it.
    public var maximumGrantsPerClient = 100
    /// How long a new signing key is published before it signs (``SigningKeys``), so
    /// relying parties that cache the JWKS see it first.
    public var signingKeyPublicationDelay: TimeInterval = 600
    public var authenticationSessionLifetime: TimeInterval = 300
    /// The clock every lifetime, interval and expiry is judged by: the host's, unless a
    /// test moves time itself (``ProviderClock``).
    public var clock: ProviderClock = .system
    /// Policy: binding first asks for a code sent to the identity's e-mail (a
    /// `verify-code` step; the code goes to the outbox).
    public var requireEmailCodeForBinding = false
    /// Policy: binding first asks the user to accept these terms (an `accept-terms`
    /// step). Clients that do not know the step stop with an error naming it, which is
    /// how a provider's new policy meets an older app (docs/PROTOCOL.md section 4).
    public var termsOfService: String?
    /// Where the provider keeps its state (docs/ARCHITECTURE.md, "The store").
    public enum Storage: Sendable {
        /// An in-memory SQLite database: `demo` and tests; gone when the provider stops.
        case memory
        /// `DIRECTORY/latchkey.sqlite3`, mode 0600 in a 0700 directory.
        case sqlite(directory: URL)
        /// A PostgreSQL database shared by several instances.
        case postgres(PostgresLocation)
    }

    public var storage: Storage = .memory

    /// The SQLite data directory, when the storage is one (`serve --data-dir`).
    public var dataDirectory: URL? {
        get {
            if case .sqlite(let directory) = storage { return directory }
            return nil
        }
        set { storage = newValue.map { .sqlite(directory: $0) } ?? .memory }
    }

    /// The 32 bytes that seal the store's secrets (signing keys). Nil: for SQLite,
    /// `store.key` beside the database (made on first start); in memory, a random key;
    /// PostgreSQL requires it, the same for every instance.
    public var storeKey: Data?
    /// Whether the provider keeps its tamper-evident audit log (docs/PROTOCOL.md, "Audit
    /// log"). On by default; off only to measure what it costs (`serve --no-audit`).
    public var auditLog = true
    /// How long audit events are kept (`serve --audit-retention`, default 90 days): older
    /// whole checkpointed segments are pruned.
    public var auditRetention: TimeInterval = 90 * 86_400
    /// How often waiting audit events are sealed into the chain (``AuditSealing``): the
    /// window in which a row could be dropped unseen by someone who can write the database.
    public var auditSealInterval: Duration = .seconds(1)
    /// Where a copy of each sealed event goes as structured journal fields
    /// (`serve --audit-syslog`: journald's native socket); nil, nowhere.
    public var auditJournalSocket: String?
    /// Requests per minute one client address may make to an endpoint that takes a
    /// code or an assertion (token, bind code, authenticate).
    public var rateLimitPerMinute = 120
    /// Proxies whose ``forwardedHeader`` names the client (docs/SECURITY.md,
    /// "Trusted proxies"). Empty: those headers are ignored and the peer is the client, so
    /// nobody can pick the address their requests are limited under.
    public var trustedProxies: [IPNetwork] = []
    /// The header those proxies name the client in; the other is ignored
    /// (``ForwardedHeader``). `X-Forwarded-For` unless the proxy writes `Forwarded`.
    public var forwardedHeader: ForwardedHeader = .xForwardedFor
    /// Log level of the provider's structured logs (swift-log).
    public var logLevel: Logger.Level = .info
    /// Where the provider's logs go, for an embedder (or a test) that keeps them apart
    /// from the process's: makes the handler for a logger's label. Nil: the handler
    /// `LoggingSystem` was bootstrapped with, as `latchkey serve` sets it up.
    public var logHandler: (@Sendable (String) -> any LogHandler)?
    /// Wrong codes allowed before a bind job, or a transfer, is dead.
    public var maximumCodeAttempts = 5
    /// How long a transfer (device linking) may take in all, and how long each of its
    /// codes lives before it is rotated.
    public var transferLifetime: TimeInterval = 600
    public var transferCodeLifetime: TimeInterval = 90
    /// Wrong transfer codes one client address may try in ten minutes.
    public var maximumTransferCodeFailuresPerAddress = 20
    /// Transfers one identity may have going at once; only a holder of one of its
    /// credentials can open one (docs/SECURITY.md, "Limits").
    public var maximumTransfersPerIdentity = 3
    /// The device authorization grant (RFC 8628): how long a device code lives, the
    /// polling interval it starts with, the places in a client's pool of live codes and
    /// how many of them one client address may hold (each is a row until it expires; a
    /// full pool gives the busiest address's oldest place to a newcomer holding fewer:
    /// docs/SECURITY.md, "Device sign-in").
    public var deviceCodeLifetime: TimeInterval = 600
    public var deviceCodeInterval = 5
    public var maximumLiveDeviceCodesPerClient = 1000
    public var maximumLiveDeviceCodesPerAddress = 10
    /// Wrong user codes one client address may enter in ten minutes, and all addresses
    /// together (RFC 8628 §5.1: a user code is guessable by design, ~34.6 bits, so the
    /// whole code space is rate limited too, not only each address).
    public var maximumUserCodeFailuresPerAddress = 20
    public var maximumUserCodeFailures = 1000
    /// Policy: anyone may create an identity at the sign-up endpoint (a profile step,
    /// then a code to the given e-mail, then a credential). Off by default.
    public var selfRegistration = false
    /// Names no identity may take and no username becomes as a certificate principal:
    /// `root`, Debian's system accounts and groups, and the operator's own (`serve
    /// --reserve-username`; docs/SECURITY.md, "Reserved names").
    public var reservedUsernames = ReservedUsernames()
    /// Where POSIX user and group IDs are allocated (``POSIXIDRange``; `serve
    /// --posix-uid-range`). Checked against the host's own ranges when it is made.
    public var posixIDRange = POSIXIDRange.default
    /// Policy: a user who lost every device may recover with a code sent to the
    /// identity's e-mail; the new credential replaces (revokes) the old ones.
    public var recovery = true
    /// The provider's name as people see it: the heading of every browser page and the
    /// WebAuthn `rp.name` their authenticator shows (L3 §5.4.2). Shown escaped, never trusted.
    public var displayName = "Latchkey"
    /// Where mail goes (``Mail``): nil keeps it in the outbox only, for `demo` and tests.
    public var mail: Mail?
    /// Run an attestation CA (`serve --attestation-ca`; docs/PROTOCOL.md section 10): issue
    /// AIK certificates to TPMs whose endorsement key certificate chains to
    /// ``endorsementRoots``, after credential activation. Off by default.
    public var attestationAuthority = false
    /// The TPM makers' CA certificates (roots and their intermediates) an endorsement key
    /// certificate must chain to (`serve --ek-roots FILE.pem`).
    public var endorsementRoots: [X509Certificate] = []
    /// Policy: every registration (bind, recovery, sign-up, import, the browser page) must
    /// carry this attestation (`serve --require-attestation tpm`); one without is refused
    /// with `attestation_required`. Nil: any, as WebAuthn's default `none` conveyance.
    /// An identity can demand it on its own too (``AttestationRequirement``).
    public var requiredAttestation: AttestationRequirement?
    /// The roots a `tpm` statement's AIK certificate may chain to (`serve
    /// --attestation-roots FILE.pem`), besides this provider's own attestation CA root when
    /// it runs one (``attestationAuthority``). With neither, `tpm` statements are refused.
    public var attestationRoots: [X509Certificate] = []

    /// Run an SSH CA (`serve --ssh-ca`; docs/PROTOCOL.md section 12): sign short-lived
    /// OpenSSH certificates for keys whose holders sign in, publish the CA key and a KRL.
    /// Off by default.
    public var sshAuthority = false
    /// How long a certificate lasts when the request names no lifetime
    /// (`serve --ssh-certificate-lifetime`, default 8 hours); never more than
    /// ``maximumSSHCertificateLifetime``.
    public var sshCertificateLifetime: TimeInterval = 8 * 3600
    /// The longest lifetime a certificate may have: 24 hours. Short lifetimes are the
    /// first line of revocation; the KRL is the second.
    public static let maximumSSHCertificateLifetime: TimeInterval = 24 * 3600
    /// Critical options every user certificate carries (`serve --ssh-force-command`,
    /// `--ssh-source-address`); none by default.
    public var sshForceCommand: String?
    public var sshSourceAddress: String?
    /// Policy: certify only SSH keys proved to live in a TPM (`serve
    /// --ssh-require-attestation tpm`; docs/SECURITY.md, "SSH certificates"): each request
    /// carries a TPM2_Certify of its key over the proof, by an attestation key whose AIK
    /// certificate chains to ``attestationRoots`` or this provider's attestation CA root.
    /// Nil: any key, though an attestation sent is still checked.
    public var sshRequiredAttestation: AttestationRequirement?

    /// Clients known by a URL (client ID metadata documents; ``ClientMetadataDocumentPolicy``).
    /// Off by default.
    public var clientMetadataDocuments = ClientMetadataDocumentPolicy()
    /// Dynamic client registration (``ClientRegistrationPolicy``). Off by default.
    public var clientRegistration = ClientRegistrationPolicy()

    /// Real delivery of the provider's mail (docs/ARCHITECTURE.md, "Operations: mail").
    public struct Mail: Sendable {
        /// How messages leave.
        public enum Transport: Sendable {
            /// An SMTP server: `smtp://[user@]host[:port]` (STARTTLS when offered) or
            /// `smtps://…` (TLS at once). The password never goes in the URL.
            case smtp(url: String, password: String?, trustedCertificatesFile: String?)
            /// The system's `sendmail -t -i` (the program's path).
            case sendmail(path: String)
        }

        public var transport: Transport
        /// The sender address (`From:` and the envelope).
        public var from: String

        public init(transport: Transport, from: String) {
            self.transport = transport
            self.from = from
        }
    }

    /// How long a sign-up or recovery code is valid.
    public var enrollmentCodeLifetime: TimeInterval = 600
    /// How soon another flow for the same account (or e-mail address) mails a fresh code;
    /// until then the flows share the code already sent (docs/SECURITY.md, "Limits").
    public var enrollmentCodeResendInterval: TimeInterval = 120
    /// Sign-ups and recoveries one client address (an IPv6 /64) may start in ten minutes.
    public var maximumEnrollmentStartsPerAddress = 20
    /// Wrong sign-up, recovery and bind codes one client address (an IPv6 /64) may try
    /// in ten minutes.
    public var maximumCodeFailuresPerAddress = 20
    /// Wrong short codes one account (recovery) or e-mail address (sign-up) may take, from
    /// all addresses together, in ten minutes and in a day (NIST SP 800-63B §5.2.2 allows
    /// at most 100 consecutive failures). Past either, only the long form of the code is
    /// taken: the owner, who has the mail, still gets in.
    public var maximumCodeFailuresPerAccount = 10
    public var maximumCodeFailuresPerAccountPerDay = 100

    /// Slow and oversized clients. A connection that sends nothing for `idleTimeout`
    /// seconds is closed, which also ends one that trickles its request headers; a
    /// request's body must arrive within `bodyTimeout` seconds (else 408); the request
    /// headers may take `maximumHeaderBytes` in all, in at most `maximumHeaderFields`
    /// fields (the provider's own clients send under 1 KiB in about ten).
    public var idleTimeout: TimeInterval = 30
    public var bodyTimeout: TimeInterval = 10
    public var maximumHeaderBytes = 16 * 1024
    public var maximumHeaderFields = 100

    public init(host: String = "127.0.0.1", port: Int = 0, issuer: URL? = nil, adminToken: String, clients: [Client] = [ProviderConfiguration.cliClient]) {
        self.host = host
        self.port = port
        self.issuer = issuer
        self.adminToken = adminToken
        self.clients = clients
    }
}

extension ProviderConfiguration {
    /// The provider's logger: ``logHandler``'s when one is set, at ``logLevel``.
    var logger: Logger {
        var logger = logHandler.map { Logger(label: "latchkey-idp", factory: $0) } ?? Logger(label: "latchkey-idp")
        logger.logLevel = logLevel
        return logger
    }
}
