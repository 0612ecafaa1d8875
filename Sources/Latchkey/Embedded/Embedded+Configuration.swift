#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
public import LatchkeyCrypto
public import LatchkeyOAuth
public import Logging

extension Embedded {
    /// Answers a ``FlowStep``: called on the flow's task, so it may await the user.
    /// Throwing (or the task's cancellation) ends the flow.
    public typealias StepHandler = @Sendable (FlowStep) async throws -> StepAnswer

    /// How an ``Embedded`` instance is set up.
    public struct Configuration: Sendable {
        /// The key vault's directory (default `$XDG_DATA_HOME/latchkey`).
        public var vaultDirectory: URL
        /// Where the vault key comes from: a passphrase, a key file or a systemd credential.
        public var keySource: VaultKeySource
        /// The hosts (and their subdomains) bind and authenticate URLs and issuers may
        /// name; anything else is refused before any request. Empty allows nothing.
        public var allowedDomains: [String]
        /// Answers the flow steps (`choose-credential`, `verify-code`); without one, a
        /// flow that reaches a step ends with ``LatchkeyError/Code/stepUnsupported``.
        public var stepHandler: StepHandler?
        /// Where the facade logs (swift-log). It logs flow progress and provider statuses,
        /// never codes, tokens or keys.
        public var logger: Logger
        /// HTTP to providers. The default enforces https (http only on loopback), a
        /// timeout, a size cap and no redirects. Whatever the transport, Embedded adds
        /// ``requestTimeout`` and ``flowTimeout`` on top; it must end a cancelled request
        /// promptly.
        public var transport: any HTTPTransport
        /// How often a transfer (export or import) asks the provider for news.
        public var transferPollInterval: Duration = .seconds(1)
        /// The most one request to a provider may take, whole: connecting, the headers and
        /// the last byte of the body. Past it the request is cancelled and the flow fails
        /// with ``LatchkeyError/Code/timeout``, however the provider trickles its answer.
        public var requestTimeout: Duration = .seconds(30)
        /// The most time one flow (a sign-in, a bind, a transfer) may spend waiting on
        /// providers, all its requests together. Time the step handler takes, and a
        /// transfer's pauses while it waits for the other device, do not count.
        public var flowTimeout: Duration = .seconds(120)
        /// Lets a new vault be created with a weak passphrase: shorter than
        /// `VaultKeySource.minimumPassphraseLength` (12), or built of what guessers try
        /// first (`VaultKeySource.weakness(ofPassphrase:)`). Off: such a vault falls to an
        /// offline guesser quickly, scrypt or not.
        public var allowsWeakPassphrase = false
        /// Makes the process non-dumpable and sets its core-file limit to 0 when the
        /// instance is created (`ProcessProtection.disableCoreDumps()`), so a crash cannot
        /// write the vault key, a passphrase or a private key to disk. Off by default: it
        /// changes the whole process, which is the application's decision. The `latchkey`
        /// command always does it.
        public var disablesCoreDumps = false
        /// Where new credentials (bind, import, sign-up, recovery) keep their private keys:
        /// in the vault file (the default), in the host's TPM, or in the TPM when one
        /// answers. A TPM key is ES256 only. Credentials already in the vault keep theirs.
        public var keyProtection: KeyProtectionSetting = .software
        /// A key agent's socket (`latchkey agent`, ``KeyAgent``; the command line reads
        /// `$LATCHKEY_AGENT_SOCK`): when an agent answers there, as this user, unlocked and
        /// holding ``vaultDirectory``, the vault's keys are used through it and
        /// ``keySource`` is never read (a deferred source is not asked). Otherwise the vault
        /// is opened here as usual; ``Embedded/vaultAccess`` says which and why. With
        /// ``attestation`` on, the vault is always opened here (the agent runs no TPM
        /// attestation). Nil by default.
        public var agentSocket: String?
        /// Whether new credentials (bind, import, sign-up, recovery) prove where their key
        /// lives: ``CredentialAttestation/tpm(authority:)`` registers TPM keys with
        /// WebAuthn `tpm` attestation, which a provider can demand
        /// (docs/SECURITY.md, "Proving keys live in the TPM"). None by default.
        public var attestation: CredentialAttestation = .none
        /// Whether sign-ins ask for tokens bound to a DPoP key (``ProofOfPossession/dpop``)
        /// when the caller does not say. Bearer by default: a provider without DPoP
        /// support would otherwise refuse every sign-in.
        public var proofOfPossession: ProofOfPossession = .none
        /// Which sign-in protocol to speak: the authorization challenge endpoint when the
        /// provider offers one, else the redirect flow (``SignInFlow/automatic``).
        public var signInFlow: SignInFlow = .automatic
        /// Whether tokens from sign-ins are kept in the vault (sealed like keys, per
        /// issuer, client and credential), so ``Embedded/validTokens(issuer:clientID:redirectURI:scopes:credential:proofOfPossession:minimumValidity:)``
        /// can hand them out again and refresh them instead of signing in. On by default;
        /// off for an app that keeps tokens in memory only.
        public var cachesTokens = true
        /// Origins besides the issuer's that ``Embedded/transport(for:)`` presents tokens
        /// to: the resource servers the app calls (docs/SECURITY.md, "Where tokens go").
        /// A request for any other origin is refused before it is sent
        /// (`OAuthError.Code.originNotAllowed`). Empty by default: the issuer's origin only.
        public var allowedResourceOrigins: [WebOrigin] = []

        public init(
            vaultDirectory: URL = KeyVault.defaultDirectory,
            keySource: VaultKeySource,
            allowedDomains: [String],
            stepHandler: StepHandler? = nil,
            logger: Logger = Logger(label: "latchkey"),
            transport: any HTTPTransport = HTTP1Transport()
        ) {
            self.vaultDirectory = vaultDirectory
            self.keySource = keySource
            self.allowedDomains = allowedDomains
            self.stepHandler = stepHandler
            self.logger = logger
            self.transport = transport
        }
    }
}
