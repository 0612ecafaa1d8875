#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyWebAuthn
import Synchronization

/// What the facade's services share (docs/ARCHITECTURE.md, "The facade and its
/// services"): the configuration, the vault's authenticator, the provider sessions, the
/// event hub and the DPoP caches. One per ``Embedded``; the services are small values
/// that hold it and nothing else, so any of them can reach any other.
final class EmbeddedCore: Sendable {
    let configuration: Embedded.Configuration
    let authenticator: SoftwareAuthenticator
    let sessions: ProviderSessions
    let hub = FlowEventHub()
    /// One signer per DPoP key record, so the nonces servers send (RFC 9449 §8) are
    /// remembered for the instance's life.
    let dpopSigners = Mutex<[KeyHandle: DPoPSigner]>([:])
    /// The DPoP key record each credential's kept tokens were last written to, so keeping
    /// tokens after a sign-in does not list the vault to find it again (a record's owner
    /// never changes; a deleted one is looked up anew).
    let dpopKeyHandles = Mutex<[KeyHandle: KeyHandle]>([:])

    init(configuration: Embedded.Configuration, authenticator: SoftwareAuthenticator) {
        self.configuration = configuration
        self.authenticator = authenticator
        sessions = ProviderSessions(
            allowedDomains: AllowedDomains(configuration.allowedDomains),
            transport: DeadlineTransport(inner: configuration.transport, requestTimeout: configuration.requestTimeout)
        )
    }

    /// A flow of `operation`, publishing on the hub, under the flow deadline.
    func flow(_ operation: String) -> FlowContext {
        FlowContext(
            operation: operation, hub: hub, logger: configuration.logger, stepHandler: configuration.stepHandler,
            deadline: FlowDeadline(total: configuration.flowTimeout)
        )
    }
}

/// One concern of the facade (sign-in, credentials, transfers, …): a value over the
/// shared ``EmbeddedCore``, with the core's parts and its sibling services at hand.
protocol EmbeddedService: Sendable {
    var core: EmbeddedCore { get }
}

extension EmbeddedService {
    var configuration: Embedded.Configuration { core.configuration }
    var authenticator: SoftwareAuthenticator { core.authenticator }
    var sessions: ProviderSessions { core.sessions }
    var allowedDomains: AllowedDomains { core.sessions.allowedDomains }
    /// The app's transport under the request deadline; every provider call goes through it.
    var transport: DeadlineTransport { core.sessions.transport }

    func flow(_ operation: String) -> FlowContext { core.flow(operation) }

    var credentialStore: CredentialService { CredentialService(core: core) }
    var attestations: AttestationService { AttestationService(core: core) }
    var signIns: SignInService { SignInService(core: core) }
    var dpopKeys: DPoPKeyService { DPoPKeyService(core: core) }
    var tokenCache: TokenCacheService { TokenCacheService(core: core) }
    var transfers: TransferService { TransferService(core: core) }
    var enrollments: EnrollmentService { EnrollmentService(core: core) }
    var deviceGrant: DeviceGrantService { DeviceGrantService(core: core) }
    var clientKeys: ClientKeyService { ClientKeyService(core: core) }
    var sshCertificates: SSHCertificateService { SSHCertificateService(core: core) }
    var hostLogins: HostLoginService { HostLoginService(core: core) }
    var protectedResources: ProtectedResourceService { ProtectedResourceService(core: core) }
}
