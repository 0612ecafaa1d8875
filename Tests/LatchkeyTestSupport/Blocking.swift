import Foundation

/// Blocking work (a pipe read, a process wait, a socket poll, a TPM command) awaited from
/// async code on a thread of its own: not on one of the (two, on these machines) threads of
/// Swift's cooperative pool, and not on Dispatch's global queue, whose few threads long reads
/// would hold, stalling every other test that waits on it.
///
/// The work stays in the calling task: it runs under a task executor preference
/// (SE-0417) whose executor gives each job a fresh thread. So the task's task-locals come
/// along, and with them Swift Testing's current test: an `#expect` inside the work is
/// recorded against the test that called it (on a bare `Thread` it was recorded against
/// «unknown», and the test itself reported as passed; issue 49).
public enum Blocking {
    public static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withTaskExecutorPreference(ThreadPerJobExecutor.shared) { work() }
    }
}

extension Blocking {
    /// Starts `work` as a detached task whose jobs run on threads of their own, so it
    /// starts even while every thread of the cooperative pool is blocked in other tests
    /// (an agent's `serve()`, which must begin before a test's client can be answered).
    public static func detached(_ work: @escaping @Sendable () async -> Void) {
        Task.detached(executorPreference: ThreadPerJobExecutor.shared) { await work() }
    }

    /// ``run(_:)`` for work that throws.
    public static func runThrowing<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withTaskExecutorPreference(ThreadPerJobExecutor.shared) { try work() }
    }
}

/// A task executor that runs each job it is given on a new thread of its own, so a job
/// that blocks holds only that thread.
final class ThreadPerJobExecutor: TaskExecutor {
    static let shared = ThreadPerJobExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let thread = Thread { unowned.runSynchronously(on: executor) }
        // Room for deep work (JSON, OpenSSL) as on the pool's threads.
        thread.stackSize = 4 << 20
        thread.start()
    }
}
