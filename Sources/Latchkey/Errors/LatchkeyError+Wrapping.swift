import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyWebAuthn

extension LatchkeyError {
    /// Any error from the layers below as a ``LatchkeyError``, so the facade throws one type.
    static func wrapping(_ error: any Error) -> LatchkeyError {
        switch error {
        case let error as LatchkeyError: error
        case is CancellationError: LatchkeyError(code: .cancelled, reason: "the operation was cancelled")
        case let error as OAuthError: LatchkeyError(error)
        case let error as KeyVaultError: LatchkeyError(error)
        case let error as WebAuthnError: LatchkeyError(error)
        default: LatchkeyError(code: .invalidArgument, reason: "\(error)")
        }
    }

    init(_ error: OAuthError) {
        switch error.code {
        case .network:
            self.init(code: .network, reason: "\(error.reason); check the connection and that the provider is running")
        case .insecureTransport:
            self.init(code: .domainNotAllowed, reason: error.reason)
        case .responseTooLarge, .malformedResponse, .unexpectedStatus:
            self.init(code: .malformedResponse, reason: error.reason)
        default:
            if let providerError = error.providerError {
                self.init(code: .providerError, reason: "the provider refused: \(providerError)", providerError: providerError)
            } else {
                self.init(code: .oauth, reason: error.reason)
            }
        }
    }

    init(_ error: KeyVaultError) {
        let hint = switch error.code {
        case .wrongKey: "; check the passphrase or key"
        case .insecurePermissions: "; make the vault directory private (chmod 700) and its files 600"
        case .keySourceUnavailable: "; provide the vault key"
        default: ""
        }
        self.init(code: .vault, reason: error.reason + hint)
    }

    init(_ error: WebAuthnError) {
        switch error.code {
        case .vault: self.init(code: .vault, reason: error.reason)
        case .noMatchingCredential: self.init(code: .noCredential, reason: error.reason)
        case .excludedCredentialExists:
            self.init(code: .credentialExists, reason: "this vault already holds a credential for this user at the provider; use it, or delete it and bind again")
        default: self.init(code: .webAuthn, reason: error.reason)
        }
    }
}
