#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey
import LatchkeyCrypto

/// What `pam enroll` and `host enroll` both write (`/etc/latchkey/pam.conf`,
/// `/etc/latchkey/host.conf`): the provider, the host's client ID and the vault that holds
/// its client key, and the TPM the key may be in. The two files name the same key.
protocol EnrolledHostConfiguration {
    var issuer: URL { get }
    var clientID: String { get }
    var vault: URL { get }
    var vaultKeyFile: URL { get }
    var tpm: String? { get set }
    func rendered() -> String
    static func load(_ path: String) throws -> Self
}

extension PAMConfiguration: EnrolledHostConfiguration {}
extension HostConfiguration: EnrolledHostConfiguration {}

extension HostVault {
    /// Enrols this host as `configuration` says and writes it to `path`: an existing file
    /// there is kept as it is (and must name the same provider and client ID: enrolling
    /// anew is removing it first), the client key is made or kept in the vault, and the TPM
    /// it went to is recorded. Returns the file as written and the key to register.
    static func enroll<Configuration: EnrolledHostConfiguration>(
        _ configuration: Configuration, at path: String, keyProtection: KeyProtectionSetting
    ) async throws -> (configuration: Configuration, key: ClientKey) {
        var configuration = configuration
        if FileManager.default.fileExists(atPath: path) {
            let existing = try Configuration.load(path)
            guard existing.issuer == configuration.issuer, existing.clientID == configuration.clientID else {
                throw CommandFailure("\(path) is for \(existing.clientID) at \(existing.issuer.absoluteString); remove it to enroll anew")
            }
            configuration = existing
        }
        let (key, tpm) = try await enroll(
            issuer: configuration.issuer, clientID: configuration.clientID, vault: configuration.vault, vaultKeyFile: configuration.vaultKeyFile,
            keyProtection: keyProtection
        )
        if configuration.tpm == nil { configuration.tpm = tpm }
        try writeConfiguration(configuration.rendered(), to: path)
        return (configuration, key)
    }
}
