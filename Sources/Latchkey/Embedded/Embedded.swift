public import Foundation
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyWebAuthn
import Logging
import Synchronization

/// Passwordless sign-in for a Linux program: the one type an application links.
///
/// `Embedded` keeps device key pairs in an encrypted vault on this host and uses them as
/// passkey-style credentials at identity providers:
///
/// - ``registerCredential(from:)`` binds a new credential from a bind URL or deep link;
/// - ``authenticate(issuer:clientID:redirectURI:scopes:credential:proofOfPossession:)`` signs in and returns
///   validated tokens (the library runs PKCE and the code exchange);
///   ``authorize(issuer:clientID:redirectURI:scopes:credential:)`` stops at the code, for
///   an app whose back end exchanges it; ``authenticate(url:credential:)`` answers an
///   authenticate URL received from elsewhere;
/// - ``credentials()``, ``deleteCredential(id:)``, ``refresh(_:scopes:)``, ``revoke(_:)``;
/// - ``isBindURL(_:)`` and ``isAuthenticateURL(_:)`` classify incoming links.
///
/// Provider policy arrives as steps (docs/PROTOCOL.md section 4), answered by the
/// configuration's ``StepHandler``; progress is published on ``events()``. Every operation
/// throws ``LatchkeyError`` only, and has a completion-handler form too.
///
/// An instance is safe to share between tasks; concurrent operations on one vault (even
/// from several processes) serialise where they must, in the vault.
public final class Embedded: Sendable {
    public let configuration: Configuration
    /// Whether the vault is used through a key agent or was opened here, and why.
    public let vaultAccess: VaultAccess
    let authenticator: SoftwareAuthenticator
    let allowedDomains: AllowedDomains
    let hub = FlowEventHub()
    /// One provider session per (issuer, client id, redirect URI): the issuer checked once,
    /// discovery documents and JWKS fetched once, refreshes of one token shared.
    let sessions: ProviderSessions
    /// The app's transport under the request deadline; every provider call goes through it.
    var transport: DeadlineTransport { sessions.transport }
    /// One signer per DPoP key record, so the nonces servers send (RFC 9449 §8) are
    /// remembered for the instance's life.
    let dpopSigners = Mutex<[KeyHandle: DPoPSigner]>([:])
    /// The DPoP key record each credential's kept tokens were last written to, so keeping
    /// tokens after a sign-in does not list the vault to find it again (a record's owner
    /// never changes; a deleted one is looked up anew).
    let dpopKeyHandles = Mutex<[KeyHandle: KeyHandle]>([:])

    /// Opens (or creates) the vault. Throws ``LatchkeyError`` with code
    /// ``LatchkeyError/Code/vault`` for a wrong passphrase or key, loose permissions, or a
    /// vault from a newer Latchkey.
    public init(configuration: Configuration) throws {
        self.configuration = configuration
        allowedDomains = AllowedDomains(configuration.allowedDomains)
        sessions = ProviderSessions(
            allowedDomains: allowedDomains, transport: DeadlineTransport(inner: configuration.transport, requestTimeout: configuration.requestTimeout)
        )
        do {
            if configuration.disablesCoreDumps { try ProcessProtection.disableCoreDumps() }
            let (store, access) = try Self.openStore(configuration)
            authenticator = SoftwareAuthenticator(vault: store)
            vaultAccess = access
        } catch {
            throw LatchkeyError.wrapping(error)
        }
    }

    /// The agent's vault when ``Configuration/agentSocket`` names a usable agent, else the
    /// vault opened here.
    private static func openStore(_ configuration: Configuration) throws -> (any KeyStore, VaultAccess) {
        var why = "no agent was named"
        if let socket = configuration.agentSocket {
            if case .tpm = configuration.attestation {
                why = "TPM attestation runs in this process, not in the agent"
            } else {
                do {
                    let store = try AgentKeyStore(socketPath: socket, directory: configuration.vaultDirectory)
                    return (store, VaultAccess(agentSocket: socket, explanation: "through the agent at \(socket) (pid \(store.agent.pid))"))
                } catch let error as KeyVaultError {
                    why = error.reason
                }
            }
        }
        do {
            let vault = try KeyVault.open(at: configuration.vaultDirectory, key: configuration.keySource, allowingWeakPassphrase: configuration.allowsWeakPassphrase)
            return (vault, VaultAccess(agentSocket: nil, explanation: "opened directly: \(why)"))
        } catch where configuration.agentSocket != nil {
            // Say why the agent was passed over: the fix may be to unlock it.
            var wrapped = LatchkeyError.wrapping(error)
            wrapped.reason += "; the agent was not used: \(why)"
            throw wrapped
        }
    }

    private init(configuration: Configuration, authenticator: SoftwareAuthenticator, vaultAccess: VaultAccess) {
        self.configuration = configuration
        self.authenticator = authenticator
        self.vaultAccess = vaultAccess
        allowedDomains = AllowedDomains(configuration.allowedDomains)
        sessions = ProviderSessions(
            allowedDomains: allowedDomains, transport: DeadlineTransport(inner: configuration.transport, requestTimeout: configuration.requestTimeout)
        )
    }

    /// The same open vault with another list of allowed domains: for a program that learns
    /// which provider it may talk to from the vault itself (a credential's issuer) or from
    /// its user, without opening the vault again. Events are published on the new
    /// instance's own stream.
    public func allowing(domains: [String]) -> Embedded {
        var configuration = configuration
        configuration.allowedDomains = domains
        return Embedded(configuration: configuration, authenticator: authenticator, vaultAccess: vaultAccess)
    }

    /// Flow progress from now on, for as long as the stream is iterated. Each call gives
    /// a new subscriber; a slow one keeps only the newest events.
    public func events() -> AsyncStream<FlowEvent> {
        hub.subscribe()
    }

    func flow(_ operation: String) -> FlowContext {
        FlowContext(
            operation: operation, hub: hub, logger: configuration.logger, stepHandler: configuration.stepHandler,
            deadline: FlowDeadline(total: configuration.flowTimeout)
        )
    }

    // MARK: Credentials

    /// Every credential in the vault, oldest first (Beyond Identity's `getPasskeys`).
    public func credentials() async throws -> [Credential] {
        try await flow("credentials").run {
            try storedCredentials()
        }
    }

    /// Every credential in the vault, and every record that could not be read: the vault
    /// keeps each credential in a record of its own, so one damaged file (a bad disk, a
    /// tampered copy) hides that credential only. A tool should show the damage rather than
    /// list what is left as if it were everything.
    ///
    /// With `checkingKeys`, each TPM-held key is loaded into the TPM (and flushed): one
    /// that cannot sign here is listed with its ``Credential/unusableReason``, never
    /// dropped. That costs a TPM load per TPM key.
    public func scanCredentials(checkingKeys: Bool = false) async throws -> CredentialScan {
        try await flow("scanCredentials").run {
            let (credentials, damaged) = try authenticator.scanCredentials()
            var listed = credentials.map(Credential.init)
            if checkingKeys {
                for index in listed.indices where listed[index].keyProtection == .tpm {
                    do {
                        try authenticator.vault.checkUsable(listed[index].handle)
                    } catch {
                        listed[index].unusableReason = (error as? KeyVaultError)?.reason ?? String(describing: error)
                    }
                }
            }
            return CredentialScan(
                credentials: listed.sorted(by: Credential.oldestFirst),
                damaged: damaged.map { CredentialScan.DamagedRecord(handle: $0.handle?.rawValue ?? "?", reason: $0.reason) }
            )
        }
    }

    func storedCredentials() throws -> [Credential] {
        storedCredentials(in: try authenticator.vault.entries())
    }

    /// The credentials among `entries`, one listing of the vault, oldest first.
    func storedCredentials(in entries: [VaultEntry]) -> [Credential] {
        storedCredentials(decoded: SoftwareAuthenticator.credentials(in: entries))
    }

    /// `decoded` (WebAuthn credentials of one listing) as the facade's credentials, oldest first.
    func storedCredentials(decoded: [SoftwareAuthenticator.Credential]) -> [Credential] {
        decoded.map(Credential.init).sorted(by: Credential.oldestFirst)
    }

    /// What ``Configuration/keyProtection`` chooses for the next new credential, and why:
    /// for ``KeyProtectionSetting/automatic``, whether a TPM answers now.
    public func keyProtectionForNewCredentials() -> KeyProtectionChoice {
        switch configuration.keyProtection {
        case .software:
            return KeyProtectionChoice(protection: .software, reason: "software keys were asked for")
        case .tpm:
            return KeyProtectionChoice(protection: .tpm, reason: "TPM keys were asked for (TPM at \(TPM.configuredLocation))")
        case .automatic:
            do {
                let tpm = try TPM.system()
                return KeyProtectionChoice(protection: .tpm, reason: "automatic: a TPM answers at \(tpm.location)")
            } catch {
                let why = (error as? CryptoError)?.reason ?? String(describing: error)
                return KeyProtectionChoice(protection: .software, reason: "automatic: no TPM answers (\(why))")
            }
        }
    }

    /// The protection for a key being created now, logged with its reason.
    func protectionForNewKey(_ flow: FlowContext) -> KeyProtection {
        let choice = keyProtectionForNewCredentials()
        flow.logger.debug("new key protection", metadata: ["protection": .string(choice.protection.rawValue), LogField.reason.rawValue: .string(choice.reason)])
        return choice.protection
    }

    /// Deletes the credential's key from this host. The provider is not told: the key is
    /// gone, so the credential can never sign again. Deleting an id that is not in the
    /// vault is not an error; the result says whether anything was deleted.
    @discardableResult
    public func deleteCredential(id: String) async throws -> Bool {
        try await flow("deleteCredential").run {
            guard let credential = try storedCredentials().first(where: { $0.id == id }) else { return false }
            guard try authenticator.deleteCredential(credential.handle) else { return false }
            deleteDPoPKeys(of: credential)
            configuration.logger.debug("credential deleted", metadata: ["credentialID": .string(String(id.prefix(8)))])
            return true
        }
    }

    /// Marks a credential revoked in the vault after the provider said so.
    func markRevoked(_ credential: Credential) {
        _ = try? authenticator.updateAttributes(of: credential.handle) { $0[Credential.Attribute.state] = Credential.State.revoked.rawValue }
    }

    /// Clears a credential's `pending` state once the provider has confirmed it (a bind
    /// or import answered, or a sign-in accepted). A vault error here leaves it pending,
    /// which costs only convenience, so it is logged rather than thrown: the provider has
    /// bound the credential, and failing now would make the caller delete it.
    func markActive(_ credential: Credential, logger: Logger) -> Credential {
        do {
            return Credential(try authenticator.updateAttributes(of: credential.handle) { $0[Credential.Attribute.state] = nil })
        } catch {
            logger.warning("credential stays pending", metadata: ["credentialID": .string(String(credential.id.prefix(8))), LogField.cause.rawValue: .string(String(describing: error))])
            return credential
        }
    }

    /// Runs a request that a revoked credential makes fail, marking it revoked if so.
    func revocationAware<Result>(_ credential: Credential, _ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch let error as LatchkeyError where error.code == .credentialRevoked {
            markRevoked(credential)
            throw error
        }
    }

    // MARK: URL classification

    /// Whether `url` is a bind URL (either form) for a provider in the allowed domains.
    public func isBindURL(_ url: URL) -> Bool {
        guard let link = try? ProviderLink.parse(url, as: .bind) else { return false }
        return allowedDomains.allows(link.provider.host)
    }

    /// Whether `url` is an authenticate URL (either form) for a provider in the allowed
    /// domains.
    public func isAuthenticateURL(_ url: URL) -> Bool {
        guard let link = try? ProviderLink.parse(url, as: .authenticate) else { return false }
        return allowedDomains.allows(link.provider.host)
    }

    /// The identity provider a bind or authenticate URL names, whether or not it is
    /// allowed: for a command-line tool whose user typed the link, to allow that host.
    public static func provider(of url: URL) -> URL? {
        ((try? ProviderLink.parse(url, as: .bind)) ?? (try? ProviderLink.parse(url, as: .authenticate))).map(\.provider.base)
    }

    /// The link's parts and a conversation with its provider, once the link is of the
    /// right kind and its provider allowed; nothing is sent before both checks pass.
    func conversation(following url: URL, as kind: ProviderLink.Kind, flow: FlowContext) throws -> (ProviderLink, ProviderConversation) {
        guard let link = try ProviderLink.parse(url, as: kind) else {
            throw switch kind {
            case .bind:
                LatchkeyError.notABindURL(reason: "this is not a bind URL (expected https://<provider>/v1/bind/<job>?token=… or <scheme>://bind?api_base_url=…&job_id=…&token=…)"
                )
            case .authenticate:
                LatchkeyError.notAnAuthenticateURL(reason: "this is not an authenticate URL (expected https://<provider>/v1/authenticate/<session> or <scheme>://authenticate?api_base_url=…&session_id=…)"
                )
            }
        }
        try allowedDomains.check(link.provider)
        return (link, ProviderConversation(flow: flow, provider: link.provider, transport: transport))
    }
}
