public import Foundation
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
        /// timeout, a size cap and no redirects.
        public var transport: any HTTPTransport
        /// How often a transfer (export or import) asks the provider for news.
        public var transferPollInterval: Duration = .seconds(1)

        public init(
            vaultDirectory: URL = KeyVault.defaultDirectory,
            keySource: VaultKeySource,
            allowedDomains: [String],
            stepHandler: StepHandler? = nil,
            logger: Logger = Logger(label: "latchkey"),
            transport: any HTTPTransport = URLSessionTransport()
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
