public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A workaround for swift-corelibs-foundation's `Process.run()` on Linux (Swift 6.3.1),
/// which reads 256 bytes of each `/proc/self/fd` entry whatever its length
/// (`findMaximumOpenFromProcSelfFD`, fixed upstream in swiftlang/swift-corelibs-foundation
/// #5472): when an entry sits at the end of glibc's `readdir` buffer and the next page is
/// unmapped, the test process dies ("Bad pointer dereference" in `Process.run`). Setting
/// malloc's mmap threshold to 32 KiB makes that buffer (32 KiB and a header) a mapping of
/// its own with about 4 KiB to spare after it, so the over-read stays inside it. Call
/// ``prepare()`` before starting a `Process`.
public enum ProcessSpawning {
    private static let prepared: Bool = {
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "mallopt") else { return false }
        // M_MMAP_THRESHOLD is -3 in glibc's malloc.h, which Swift's Glibc module does not import.
        return unsafeBitCast(symbol, to: Mallopt.self)(-3, 32 * 1024) == 1
    }()

    /// Applies the workaround, once per process.
    public static func prepare() {
        _ = prepared
    }

    /// Starts `process` with no signal blocked. A child inherits the signal mask of the
    /// thread that spawns it, and Foundation's `Process` does not reset it: spawned from a
    /// Dispatch worker (every Swift concurrency thread is one), which blocks SIGTERM, SIGINT,
    /// SIGHUP and others, a child such as python3 ignored the SIGTERM that
    /// ``ChildProcess/stop(_:grace:)`` sends and ran out its grace before SIGKILL.
    public static func run(_ process: Process) throws {
        prepare()
        var none = sigset_t()
        sigemptyset(&none)
        var previous = sigset_t()
        pthread_sigmask(SIG_SETMASK, &none, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try process.run()
    }
}
