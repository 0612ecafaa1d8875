import Foundation
import Latchkey
import LatchkeyCrypto
import Logging

/// The host's own vault, shared by `latchkey pam` and `latchkey host`: a root-only folder
/// and key file holding the host's client key (one key a provider and client id, made by
/// whichever enrolment comes first).
enum HostVault {
    /// The facade over the vault: the provider's host only, no agent, no prompts. The PAM
    /// helper keeps no tokens (it runs once); the host daemon keeps its client credentials
    /// tokens between syncs.
    static func embedded(
        issuer: URL, vault: URL, vaultKeyFile: URL, keyProtection: KeyProtectionSetting = .software, cachesTokens: Bool, logger: Logger
    ) throws -> Embedded {
        var settings = Embedded.Configuration(
            vaultDirectory: vault, keySource: .keyFile(vaultKeyFile), allowedDomains: [issuer.host ?? ""], stepHandler: nil, logger: logger
        )
        settings.cachesTokens = cachesTokens
        settings.agentSocket = nil
        settings.keyProtection = keyProtection
        return try Embedded(configuration: settings)
    }
}
