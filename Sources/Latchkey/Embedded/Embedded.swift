#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif
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
public final class Embedded: EmbeddedService {
    /// Whether the vault is used through a key agent or was opened here, and why.
    public let vaultAccess: VaultAccess
    /// What the services share: the configuration, the vault, the provider sessions.
    let core: EmbeddedCore

    /// How this instance was set up.
    public var configuration: Configuration { core.configuration }

    /// Opens (or creates) the vault. Throws ``LatchkeyError`` with code
    /// ``LatchkeyError/Code/vault`` for a wrong passphrase or key, loose permissions, or a
    /// vault from a newer Latchkey.
    public init(configuration: Configuration) throws {
        do {
            if configuration.disablesCoreDumps { try ProcessProtection.disableCoreDumps() }
            let (store, access) = try Self.openStore(configuration)
            core = EmbeddedCore(configuration: configuration, authenticator: SoftwareAuthenticator(vault: store))
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
        core = EmbeddedCore(configuration: configuration, authenticator: authenticator)
        self.vaultAccess = vaultAccess
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
        core.hub.subscribe()
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
}
