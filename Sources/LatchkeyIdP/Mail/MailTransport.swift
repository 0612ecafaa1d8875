import Foundation

/// How the provider hands mail on (docs/ARCHITECTURE.md, "Operations: mail"): to an SMTP
/// server (``SMTPTransport``) or the system's `sendmail` (``SendmailTransport``). Without
/// one, messages stay in the outbox, which `demo` and the tests read.
protocol MailTransport: Sendable {
    /// Sends `message` as `from`; throws a ``MailError`` saying whether to try again.
    func send(_ message: MailMessage, from: String) async throws
}

/// Runs blocking work (sockets, a child process) on a Dispatch thread, never on the
/// cooperative pool the server's tasks need.
enum BlockingWork {
    static func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Swift.Result { try work() })
            }
        }
    }
}
