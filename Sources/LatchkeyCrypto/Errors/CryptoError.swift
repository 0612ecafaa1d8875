/// An error thrown by ``LatchkeyCrypto``.
///
/// Modelled on swift-certificates' `CertificateError`: a ``code`` to match on, which is
/// an open set (new codes are not a breaking change), a human ``reason``, and, when
/// OpenSSL itself refused, the entries that were on OpenSSL's error queue. The queue is
/// drained when the error is made, so it never leaks into an unrelated later call.
///
/// Equality and hashing consider the ``code`` only, so tests can compare against
/// `CryptoError(code: .invalidKey)` (the template all Latchkey errors share).
///
/// No reason string ever carries key material, plaintext or any other secret.
public struct CryptoError: LatchkeyErrorTemplate, Sendable {
    /// What kind of failure this is.
    public var code: Code
    /// What went wrong, in words a developer can act on.
    public var reason: String
    /// OpenSSL's own error queue at the time of the failure, oldest first.
    public var openSSLErrors: [OpenSSLErrorEntry]
    /// The error this one stands for, when it came from elsewhere (the system, a parser).
    public var underlying: (any Error)?
    /// Where in Latchkey the error was raised.
    public var file: String
    /// The line in ``file``.
    public var line: UInt

    public init(
        code: Code,
        reason: String = "",
        openSSLErrors: [OpenSSLErrorEntry] = [],
        underlying: (any Error)? = nil,
        file: String = #fileID,
        line: UInt = #line
    ) {
        self.code = code
        self.reason = reason
        self.openSSLErrors = openSSLErrors
        self.underlying = underlying
        self.file = file
        self.line = line
    }

    package var details: String? {
        openSSLErrors.isEmpty ? nil : "OpenSSL: " + openSSLErrors.map(\.description).joined(separator: "; ")
    }
}

extension CryptoError {
    /// The kind of a ``CryptoError``. Open-ended: switch statements need a `default`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: String, Hashable, Sendable {
            case invalidKey
            case unsupportedAlgorithm
            case invalidParameter
            case invalidSignatureEncoding
            case authenticationFailure
            case invalidEncoding
            case randomnessFailure
            case openSSLFailure
            case processProtection
            case tlsFailure
            case connectionFailed
            case tpmUnavailable
            case tpmKeyUnusable
            case tpmCommandRefused
        }

        private let backing: Backing

        private init(_ backing: Backing) {
            self.backing = backing
        }

        /// Key bytes that do not parse, a key of the wrong type or size, or a point not
        /// on the curve.
        public static let invalidKey = Code(.invalidKey)
        /// A key type, curve or algorithm Latchkey does not support.
        public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        /// A length, size or cost parameter outside the range the operation allows.
        public static let invalidParameter = Code(.invalidParameter)
        /// A signature whose encoding is malformed (not a wrong signature: that is `false`).
        public static let invalidSignatureEncoding = Code(.invalidSignatureEncoding)
        /// An AEAD open whose tag did not match: wrong key, nonce, tag, AAD or ciphertext.
        public static let authenticationFailure = Code(.authenticationFailure)
        /// Malformed base64url, base64, PEM or JSON key text.
        public static let invalidEncoding = Code(.invalidEncoding)
        /// The system's random generator failed; nothing random was produced.
        public static let randomnessFailure = Code(.randomnessFailure)
        /// OpenSSL failed where it should not (usually memory exhaustion or a missing
        /// provider); see ``CryptoError/openSSLErrors``.
        public static let openSSLFailure = Code(.openSSLFailure)
        /// The process could not be protected (``ProcessProtection``): core dumps are
        /// still possible.
        public static let processProtection = Code(.processProtection)
        /// A TLS connection could not be set up, failed or was refused: no handshake, a
        /// certificate that does not verify or names another host, a broken stream.
        public static let tlsFailure = Code(.tlsFailure)
        /// A TCP connection could not be made (the name does not resolve, nothing
        /// listens) or broke while in use.
        public static let connectionFailed = Code(.connectionFailed)
        /// No TPM answers where ``TPM`` was told to look (`TPM2OPENSSL_TCTI`, by default
        /// `/dev/tpmrm0`), or OpenSSL's `tpm2` provider is not installed, or the TPM is busy.
        public static let tpmUnavailable = Code(.tpmUnavailable)
        /// A TPM-wrapped key this TPM cannot load: made by another TPM, or before this one
        /// was cleared. The key blob is intact; only that TPM can use it.
        public static let tpmKeyUnusable = Code(.tpmKeyUnusable)
        /// The TPM answered a command with an error (its response code is in the reason):
        /// no endorsement key certificate, a credential blob made for another TPM or
        /// another key, an object it will not load.
        public static let tpmCommandRefused = Code(.tpmCommandRefused)

        public var description: String { backing.rawValue }
    }

    /// One entry of OpenSSL's per-thread error queue (`ERR_get_error_all`).
    public struct OpenSSLErrorEntry: Hashable, Sendable, CustomStringConvertible {
        /// The packed OpenSSL error code (library and reason).
        public var code: UInt
        /// OpenSSL's text for it (`ERR_error_string_n`).
        public var message: String

        public init(code: UInt, message: String) {
            self.code = code
            self.message = message
        }

        public var description: String { message }
    }
}
