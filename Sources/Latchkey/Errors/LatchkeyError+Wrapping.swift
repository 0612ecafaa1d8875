import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyWebAuthn
import LatchkeyProtocol

extension LatchkeyError {
    /// Any error from the layers below as a ``LatchkeyError``, so the facade throws one
    /// type; the original is kept in ``underlying`` and its origin in ``file`` and ``line``.
    static func wrapping(_ error: any Error) -> LatchkeyError {
        switch error {
        case let error as LatchkeyError: error
        case let error as CancellationError: LatchkeyError.cancelled(reason: "the operation was cancelled", underlying: error)
        case let error as OAuthError: LatchkeyError(error)
        case let error as KeyVaultError: LatchkeyError(error)
        case let error as WebAuthnError: LatchkeyError(error)
        case let error as CryptoError: LatchkeyError(error)
        default: LatchkeyError.invalidArgument(reason: String(describing: error), underlying: error)
        }
    }

    init(_ error: OAuthError) {
        let (code, reason, providerError): (Code, String, OAuthError.ProviderError?) = switch error.code {
        case .network: (.network, "\(error.reason); check the connection and that the provider is running", nil)
        case .timedOut: (.timeout, "\(error.reason); the provider is slow or not answering", nil)
        case .insecureTransport, .endpointOutsideIssuer, .providerNotAllowed: (.domainNotAllowed, error.reason, nil)
        case .responseTooLarge, .malformedResponse, .unexpectedStatus: (.malformedResponse, error.reason, nil)
        case .deviceAccessDenied: (.deviceAccessDenied, error.reason, error.providerError)
        case .deviceCodeExpired: (.deviceCodeExpired, error.reason, error.providerError)
        default:
            if let providerError = error.providerError {
                // The reason is for people and logs: the provider's words made safe to show
                // (the raw ones stay in `providerError`).
                (.providerError, "the provider refused: " + "\(providerError)".displaySafe(maximumLength: 512), providerError)
            } else {
                (.oauth, error.reason, nil)
            }
        }
        self.init(code: code, reason: reason, providerError: providerError, underlying: error, file: error.file, line: error.line)
    }

    init(_ error: KeyVaultError) {
        let hint = switch error.code {
        case .wrongKey: "; check the passphrase or key"
        case .insecurePermissions: "; make the vault directory private (chmod 700) and its files 600"
        case .keySourceUnavailable: "; provide the vault key"
        case .tpmUnavailable: "; point TPM2OPENSSL_TCTI at the TPM (default device:/dev/tpmrm0) and check it is accessible"
        default: ""
        }
        let code: Code = switch error.code {
        case .tpmUnavailable: .tpmUnavailable
        case .wrongTPM: .wrongTPM
        case .agentUnavailable: .agent
        default: .vault
        }
        self.init(code: code, reason: error.reason + hint, underlying: error, file: error.file, line: error.line)
    }

    init(_ error: WebAuthnError) {
        if error.code == .vault, let vaultError = error.underlying as? KeyVaultError {
            self.init(vaultError)
            return
        }
        let (code, reason): (Code, String) = switch error.code {
        case .vault: (.vault, error.reason)
        case .noMatchingCredential: (.noCredential, error.reason)
        case .attestationFailed: (.attestationFailed, error.reason)
        case .excludedCredentialExists:
            (.credentialExists, "this vault already holds a credential for this user at the provider; use it, or delete it and bind again")
        default: (.webAuthn, error.reason)
        }
        self.init(code: code, reason: reason, underlying: error, file: error.file, line: error.line)
    }

    init(_ error: CryptoError) {
        self.init(code: .crypto, reason: "a cryptographic operation failed: \(error.reason)", underlying: error, file: error.file, line: error.line)
    }
}
