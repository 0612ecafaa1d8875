import Glibc

/// A POSIX thread of its own for work that blocks: a socket's accept loop, one connection's
/// conversation, an HTTP exchange, a TPM command. On one of the few threads of Swift's
/// cooperative pool (two on a two-core host) such a wait would stall every other task.
///
/// Foundation's `Thread` did this before; it lives in swift-corelibs-foundation, which
/// brings ICU's data into every binary that links it (docs/PERFORMANCE.md, "The Debian
/// package"). Unlike `Thread`, a thread the system cannot give is reported, so a caller
/// waiting for the work's answer is never left waiting for a thread that never ran.
package enum DetachedThread {
    private final class Work {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Runs `body` on a new detached thread (nobody joins it; its resources go back to the
    /// system when `body` returns).
    ///
    /// - Parameter stackSize: the thread's stack in bytes, or `nil` for the process's
    ///   default (`ulimit -s`, 8 MiB of address space on Debian).
    /// - Returns: `false` when `pthread_create` fails (`EAGAIN`: the process or user is
    ///   at its limit of threads), and `body` never runs.
    @discardableResult
    package static func start(stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) -> Bool {
        var attributes = pthread_attr_t()
        guard pthread_attr_init(&attributes) == 0 else { return false }
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        if let stackSize {
            pthread_attr_setstacksize(&attributes, max(stackSize, Int(PTHREAD_STACK_MIN)))
        }
        let work = Unmanaged.passRetained(Work(body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, &attributes, { argument in
            guard let argument else { return nil }
            Unmanaged<Work>.fromOpaque(argument).takeRetainedValue().body()
            return nil
        }, work)
        guard status == 0 else {
            Unmanaged<Work>.fromOpaque(work).release()
            return false
        }
        return true
    }
}
