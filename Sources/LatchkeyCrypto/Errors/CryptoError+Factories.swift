// One factory per ``CryptoError/Code``, as swift-certificates' `CertificateError` has: a call
// site names the kind of failure first and cannot pair a reason with the wrong code.
extension CryptoError {
    /// Key bytes that do not parse, a key of the wrong type or size, or a point not
    /// on the curve.
    public static func invalidKey(
        reason: String = "", openSSLErrors: [OpenSSLErrorEntry] = [], underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> CryptoError {
        CryptoError(code: .invalidKey, reason: reason, openSSLErrors: openSSLErrors, underlying: underlying, file: file, line: line)
    }

    /// A key type, curve or algorithm Latchkey does not support.
    public static func unsupportedAlgorithm(
        reason: String = "", openSSLErrors: [OpenSSLErrorEntry] = [], underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> CryptoError {
        CryptoError(code: .unsupportedAlgorithm, reason: reason, openSSLErrors: openSSLErrors, underlying: underlying, file: file, line: line)
    }

    /// A length, size or cost parameter outside the range the operation allows.
    public static func invalidParameter(
        reason: String = "", openSSLErrors: [OpenSSLErrorEntry] = [], underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> CryptoError {
        CryptoError(code: .invalidParameter, reason: reason, openSSLErrors: openSSLErrors, underlying: underlying, file: file, line: line)
    }

    /// A signature whose encoding is malformed (not a wrong signature: that is `false`).
    public static func invalidSignatureEncoding(
        reason: String = "", openSSLErrors: [OpenSSLErrorEntry] = [], underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> CryptoError {
        CryptoError(code: .invalidSignatureEncoding, reason: reason, openSSLErrors: openSSLErrors, underlying: underlying, file: file, line: line)
    }

    /// An AEAD open whose tag did not match: wrong key, nonce, tag, AAD or ciphertext.
    public static func authenticationFailure(
        reason: String = "", openSSLErrors: [OpenSSLErrorEntry] = [], underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> CryptoError {
        CryptoError(code: .authenticationFailure, reason: reason, openSSLErrors: openSSLErrors, underlying: underlying, file: file, line: line)
    }

    /// Malformed base64url, base64, PEM or JSON key text.
    public static func invalidEncoding(
        reason: String = "", openSSLErrors: [OpenSSLErrorEntry] = [], underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> CryptoError {
        CryptoError(code: .invalidEncoding, reason: reason, openSSLErrors: openSSLErrors, underlying: underlying, file: file, line: line)
    }

    /// The system's random generator failed; nothing random was produced.
    public static func randomnessFailure(
        reason: String = "", openSSLErrors: [OpenSSLErrorEntry] = [], underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> CryptoError {
        CryptoError(code: .randomnessFailure, reason: reason, openSSLErrors: openSSLErrors, underlying: underlying, file: file, line: line)
    }

    /// OpenSSL failed where it should not (usually memory exhaustion or a missing
    /// provider); see ``CryptoError/openSSLErrors``.
    public static func openSSLFailure(
        reason: String = "", openSSLErrors: [OpenSSLErrorEntry] = [], underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> CryptoError {
        CryptoError(code: .openSSLFailure, reason: reason, openSSLErrors: openSSLErrors, underlying: underlying, file: file, line: line)
    }

    /// The process could not be protected (``ProcessProtection``): core dumps are
    /// still possible.
    public static func processProtection(
        reason: String = "", openSSLErrors: [OpenSSLErrorEntry] = [], underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> CryptoError {
        CryptoError(code: .processProtection, reason: reason, openSSLErrors: openSSLErrors, underlying: underlying, file: file, line: line)
    }

    /// A TLS connection could not be set up, failed or was refused: no handshake, a
    /// certificate that does not verify or names another host, a broken stream.
    public static func tlsFailure(
        reason: String = "", openSSLErrors: [OpenSSLErrorEntry] = [], underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> CryptoError {
        CryptoError(code: .tlsFailure, reason: reason, openSSLErrors: openSSLErrors, underlying: underlying, file: file, line: line)
    }

    /// A TCP connection could not be made (the name does not resolve, nothing listens)
    /// or broke while in use.
    public static func connectionFailed(
        reason: String = "", openSSLErrors: [OpenSSLErrorEntry] = [], underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> CryptoError {
        CryptoError(code: .connectionFailed, reason: reason, openSSLErrors: openSSLErrors, underlying: underlying, file: file, line: line)
    }

    /// No TPM answers where ``TPM`` was told to look (`TPM2OPENSSL_TCTI`, by default
    /// `/dev/tpmrm0`), or OpenSSL's `tpm2` provider is not installed, or the TPM is busy.
    public static func tpmUnavailable(
        reason: String = "", openSSLErrors: [OpenSSLErrorEntry] = [], underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> CryptoError {
        CryptoError(code: .tpmUnavailable, reason: reason, openSSLErrors: openSSLErrors, underlying: underlying, file: file, line: line)
    }

    /// A TPM-wrapped key this TPM cannot load: made by another TPM, or before this one
    /// was cleared. The key blob is intact; only that TPM can use it.
    public static func tpmKeyUnusable(
        reason: String = "", openSSLErrors: [OpenSSLErrorEntry] = [], underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> CryptoError {
        CryptoError(code: .tpmKeyUnusable, reason: reason, openSSLErrors: openSSLErrors, underlying: underlying, file: file, line: line)
    }

    /// The TPM answered a command with an error (its response code is in the reason).
    public static func tpmCommandRefused(
        reason: String = "", underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> CryptoError {
        CryptoError(code: .tpmCommandRefused, reason: reason, underlying: underlying, file: file, line: line)
    }
}
