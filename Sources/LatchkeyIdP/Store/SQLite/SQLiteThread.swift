import NIOPosix

/// The one thread that runs everything the SQLite store does: sqlite-nio's calls (it
/// runs each statement on the thread pool it is given, here a pool of one thread) and,
/// as a task executor, the transaction bodies that issue them.
///
/// Why: a profile of `latchkey serve` signing users in showed about half of its CPU in the
/// kernel switching threads. With sqlite-nio's shared pool every statement woke a pool
/// thread and then woke the waiting task on another thread, about twenty statements per
/// sign-in, each two switches. With the bodies running on the pool's own thread, a
/// statement's work item and the task's next step are queued on the thread that is
/// already running, so a whole transaction group runs without a thread switch, and the
/// caller is woken once when its answer is durable (docs/ARCHITECTURE.md, "The store").
///
/// One such thread serves every SQLite store of the process (a provider has one) and lives
/// as long as the process: a task holds its preferred executor unowned (SE-0417), so an
/// executor must outlive every task that may still prefer it, and a pool shut down under
/// such tasks left a test process that never exited.
final class SQLiteThread: TaskExecutor, @unchecked Sendable {
    // @unchecked: the pool is a thread-safe NIO class; nothing else is stored.
    let pool: NIOThreadPool

    static let shared = SQLiteThread()

    private init() {
        pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        pool.submit { _ in job.runSynchronously(on: executor) }
    }
}
