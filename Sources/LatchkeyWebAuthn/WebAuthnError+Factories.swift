// One factory per ``WebAuthnError/Code``, as swift-certificates' `CertificateError` has: a call
// site names the kind of failure first and cannot pair a reason with the wrong code.
extension WebAuthnError {

    public static func malformedCBOR(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .malformedCBOR, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func malformedCOSEKey(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .malformedCOSEKey, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func malformedAuthenticatorData(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .malformedAuthenticatorData, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func malformedAttestationObject(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .malformedAttestationObject, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func malformedClientData(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .malformedClientData, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func malformedJSON(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .malformedJSON, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func malformedTPMStructure(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .malformedTPMStructure, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func unsupportedAlgorithm(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .unsupportedAlgorithm, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func credentialIDMismatch(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .credentialIDMismatch, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func credentialNotAllowed(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .credentialNotAllowed, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func wrongCeremonyType(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .wrongCeremonyType, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func challengeMismatch(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .challengeMismatch, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func originMismatch(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .originMismatch, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func crossOriginNotAllowed(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .crossOriginNotAllowed, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func rpIDHashMismatch(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .rpIDHashMismatch, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func userNotPresent(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .userNotPresent, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func userNotVerified(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .userNotVerified, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func backupStateWithoutEligibility(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .backupStateWithoutEligibility, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func backupEligibilityChanged(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .backupEligibilityChanged, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func algorithmNotAllowed(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .algorithmNotAllowed, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func unsupportedAttestationFormat(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .unsupportedAttestationFormat, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func invalidAttestation(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .invalidAttestation, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func invalidSignature(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .invalidSignature, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func signCountNotIncreased(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .signCountNotIncreased, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func credentialIDTooLong(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .credentialIDTooLong, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func insecureOrigin(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .insecureOrigin, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func invalidRelyingPartyID(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .invalidRelyingPartyID, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func excludedCredentialExists(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .excludedCredentialExists, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func noMatchingCredential(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .noMatchingCredential, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func credentialChoiceRequired(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .credentialChoiceRequired, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func vault(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .vault, reason: reason, underlying: underlying, file: file, line: line)
    }

    public static func attestationFailed(
        reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> WebAuthnError {
        WebAuthnError(code: .attestationFailed, reason: reason, underlying: underlying, file: file, line: line)
    }
}
