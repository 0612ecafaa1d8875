import Foundation

/// Blocking work (a pipe read, a process wait, a socket poll) awaited from async code on
/// a thread of its own: not on one of the (two, on these machines) threads of Swift's
/// cooperative pool, and not on Dispatch's global queue, whose few threads long reads
/// would hold, stalling every other test that waits on it.
public enum Blocking {
    public static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: work()) }.start()
        }
    }
}

extension Blocking {
    /// ``run(_:)`` for work that throws (a TPM command: a test's TPM calls wait for the TPM
    /// while other tests use it, and must not hold a cooperative thread meanwhile).
    public static func runThrowing<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try work() }) }.start()
        }
    }
}
