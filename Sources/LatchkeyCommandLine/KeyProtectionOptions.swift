import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Latchkey
import LatchkeyCrypto

/// `--key-protection software|tpm|auto`, for the commands that create a credential (`bind`,
/// `import`, `signup`, `recover`; docs/SECURITY.md, "Keys in the TPM").
struct KeyProtectionOptions: ParsableArguments {
    enum Choice: String, ExpressibleByArgument, CaseIterable {
        case software, tpm, auto

        var setting: KeyProtectionSetting {
            switch self {
            case .software: .software
            case .tpm: .tpm
            case .auto: .automatic
            }
        }
    }

    @Option(help: ArgumentHelp(
        "Where the new credential's private key lives: software (sealed in the vault), tpm (in this host's TPM, ES256 only; TPM2OPENSSL_TCTI says which TPM, default device:/dev/tpmrm0) or auto (tpm when one answers). Default: $LATCHKEY_KEY_PROTECTION, else software.",
        valueName: "software|tpm|auto"
    ))
    var keyProtection: Choice?

    func setting() throws -> KeyProtectionSetting {
        if let keyProtection { return keyProtection.setting }
        guard let text = ProcessInfo.processInfo.environment["LATCHKEY_KEY_PROTECTION"], !text.isEmpty else { return .software }
        guard let choice = Choice(rawValue: text) else {
            throw ValidationError("LATCHKEY_KEY_PROTECTION is software, tpm or auto")
        }
        return choice.setting
    }

    /// One line for the user about where the new key went (on stderr: stdout may be JSON).
    static func report(_ credential: Credential, choice: KeyProtectionChoice) {
        Terminal.note("Key protection: \(credential.keyProtection) (\(choice.reason))")
    }
}
