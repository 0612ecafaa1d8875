// One factory per ``MailError/Code``, as swift-certificates' `CertificateError` has: a call
// site names the kind of failure first and cannot pair a reason with the wrong code.
extension MailError {
    /// The server could not be reached or failed for now (a 4xx reply before any
    /// recipient, a broken connection, TLS trouble): trying again later may work.
    /// Counts against the transport's health (``MailHealth``).
    public static func temporary(
        _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> MailError {
        MailError(.temporary, reason, underlying: underlying, file: file, line: line)
    }

    /// The server refused the provider itself for good (a 5xx reply to the login or
    /// to the sender, `AUTH` or `MAIL FROM`): a setting to fix. Counts against the
    /// transport's health.
    public static func rejected(
        _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> MailError {
        MailError(.rejected, reason, underlying: underlying, file: file, line: line)
    }

    /// The server put off this one recipient or message (a 4xx reply to `RCPT TO` or
    /// to the message, as Postfix answers 450 for an address it has not verified yet):
    /// retried later, and says nothing about the server.
    public static func recipientDeferred(
        _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> MailError {
        MailError(.recipientDeferred, reason, underlying: underlying, file: file, line: line)
    }

    /// The server refused this one recipient or message for good (a 5xx reply to
    /// `RCPT TO` or to the message, a sendmail exit for an unknown user or host).
    /// Says nothing about the server.
    public static func recipientRefused(
        _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> MailError {
        MailError(.recipientRefused, reason, underlying: underlying, file: file, line: line)
    }

    /// A mail setting that cannot be used (a URL, an address, a password in clear).
    public static func invalidConfiguration(
        _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> MailError {
        MailError(.invalidConfiguration, reason, underlying: underlying, file: file, line: line)
    }

    /// An address that cannot be put on the wire as it is.
    public static func invalidAddress(
        _ reason: String, underlying: (any Error)? = nil, file: String = #fileID, line: UInt = #line
    ) -> MailError {
        MailError(.invalidAddress, reason, underlying: underlying, file: file, line: line)
    }
}
