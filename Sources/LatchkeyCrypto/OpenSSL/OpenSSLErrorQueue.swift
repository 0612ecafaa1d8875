import CLatchkeyOpenSSL

/// OpenSSL keeps a per-thread queue of errors. Every failing call in this module drains
/// it into the thrown ``CryptoError``, and every call that fails on purpose (a bad
/// signature) clears it, so the queue is empty whenever control returns to the caller.
enum OpenSSLErrorQueue {
    /// At most this many entries are kept; a hostile input cannot grow an error without
    /// bound.
    private static let maximumEntries = 16

    static func drain() -> [CryptoError.OpenSSLErrorEntry] {
        var entries: [CryptoError.OpenSSLErrorEntry] = []
        while true {
            var data: UnsafePointer<CChar>?
            var flags: Int32 = 0
            let code = ERR_get_error_all(nil, nil, nil, &data, &flags)
            if code == 0 { break }
            if entries.count < maximumEntries {
                var buffer = [CChar](repeating: 0, count: 256)
                ERR_error_string_n(code, &buffer, buffer.count)
                var message = String(nulTerminated: buffer)
                // The provider's own words, when it left some (tpm2-openssl: the TSS's
                // decoded response code, such as "tcti:IO failure"), bounded.
                if flags & ERR_TXT_STRING != 0, let data {
                    message += " (" + String(String(cString: data).prefix(256)) + ")"
                }
                entries.append(.init(code: UInt(code), message: message))
            }
        }
        return entries
    }

    /// Forgets queued errors from an expected failure (for example a wrong signature).
    static func clear() {
        ERR_clear_error()
    }
}

extension CryptoError {
    /// An error of `code` carrying whatever OpenSSL queued.
    static func fromOpenSSL(
        _ code: Code,
        _ reason: String,
        file: String = #fileID,
        line: UInt = #line
    ) -> CryptoError {
        CryptoError(code: code, reason: reason, openSSLErrors: OpenSSLErrorQueue.drain(), file: file, line: line)
    }
}

extension String {
    /// The text in a C buffer up to its first NUL (or its end), decoded as UTF-8.
    init(nulTerminated buffer: [CChar]) {
        self.init(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
