#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LatchkeyCrypto
import LatchkeyProtocol
import LatchkeyWebAuthn
import Logging

/// The credentials in this vault: listing them, the protection new keys get, deleting
/// one, and the states a provider's answers put them in (docs/ARCHITECTURE.md, "The
/// facade and its services").
struct CredentialService: EmbeddedService {
    let core: EmbeddedCore
}

extension CredentialService {

    /// The work of `Embedded.credentials`, which documents it.
    func credentials() async throws -> [Credential] {
        try await flow("credentials").run {
            try storedCredentials()
        }
    }

    /// The work of `Embedded.scanCredentials`, which documents it.
    func scanCredentials(checkingKeys: Bool = false) async throws -> CredentialScan {
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

    /// The work of `Embedded.keyProtectionForNewCredentials`, which documents it.
    func keyProtectionForNewCredentials() -> KeyProtectionChoice {
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

    /// The work of `Embedded.deleteCredential`, which documents it.
    func deleteCredential(id: String) async throws -> Bool {
        try await flow("deleteCredential").run {
            guard let credential = try storedCredentials().first(where: { $0.id == id }) else { return false }
            guard try authenticator.deleteCredential(credential.handle) else { return false }
            dpopKeys.deleteDPoPKeys(of: credential)
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
}
