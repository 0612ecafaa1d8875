public import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A program the tests started, spawned with `posix_spawn` and reaped with `waitid` and
/// `waitpid`, in place of Foundation's `Process`.
///
/// Why not `Process`: on Linux (Swift 6.3.1), `Process.run()` lists `/proc/self/fd` and
/// reads 256 bytes of each entry's name whatever its length
/// (`findMaximumOpenFromProcSelfFD`, fixed upstream in swiftlang/swift-corelibs-foundation
/// #5472). An entry at the end of glibc's `readdir` buffer with an unmapped page after it
/// kills the whole test process; two full CI runs of 2026-11-25 died so, with the test
/// process holding some 2,000 descriptors. A malloc tuning that moved the buffer onto a
/// mapping of its own did not always apply (glibc serves large blocks from an arena's top
/// before it maps). Here the child closes every descriptor from 3 up itself
/// (`posix_spawn_file_actions_addclosefrom_np`, glibc 2.34), so nothing is listed; and its
/// exit is read with `waitid`, with no Dispatch source and no run loop between the exit
/// and the test (Foundation's could lag by seconds under load).
///
/// The child starts with no signal blocked and every signal at its default: a thread of
/// Swift's pool blocks SIGTERM and others, and a child inherits that mask, so a python3
/// helper once ignored the SIGTERM that ``ChildProcess/stop(_:grace:)`` sent.
public final class SpawnedProcess: Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// This process's own descriptor, shared.
        case inherit
        /// A pipe's child end: the write end for stdout and stderr, the read end for
        /// stdin. This process closes its copy of that end once the child has started,
        /// so a read of the other end sees the end of the file when the child exits.
        case pipe(Pipe)
        /// An open file, shared; this process keeps it open.
        case file(FileHandle)
    }

    public let processIdentifier: Int32
    public let executableURL: URL
    /// The raw `waitpid` status once the child has been reaped.
    private let reaped = Mutex<Int32?>(nil)

    /// Starts `executable arguments…`. `environment` is the child's whole environment
    /// (nil: this process's own); `workingDirectory` its current directory (nil: ours).
    public init(
        _ executable: URL,
        _ arguments: [String],
        environment: [String: String]? = nil,
        stdin: Stream = .null,
        stdout: Stream = .null,
        stderr: Stream = .null,
        workingDirectory: URL? = nil
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .inherit:
                break
            case .pipe(let pipe):
                let end = target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                posix_spawn_file_actions_adddup2(&actions, end.fileDescriptor, target)
            case .file(let handle):
                posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
            }
        }
        guard let closeFrom = Self.closeFrom, let changeDirectory = Self.changeDirectory else {
            throw TestSupportError("this C library lacks posix_spawn_file_actions_addclosefrom_np or _addchdir_np (glibc 2.34 has both)")
        }
        _ = closeFrom(&actions, 3)
        if let workingDirectory {
            _ = changeDirectory(&actions, workingDirectory.path)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let variables = environment ?? ProcessInfo.processInfo.environment
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let failure = posix_spawn(&pid, executable.path, &actions, &attributes, argv, envp)
        guard failure == 0 else {
            throw TestSupportError("cannot start \(executable.path): \(String(cString: strerror(failure)))")
        }
        processIdentifier = pid
        executableURL = executable

        // Our copies of the child's pipe ends: a reader of a pipe whose write end we kept
        // would wait forever. (stdout and stderr may share one pipe: closed once.)
        var closed: [ObjectIdentifier] = []
        for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            guard case .pipe(let pipe) = stream else { continue }
            let end = target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting
            guard !closed.contains(ObjectIdentifier(end)) else { continue }
            closed.append(ObjectIdentifier(end))
            try? end.close()
        }
    }

    // glibc's `posix_spawn_file_actions_addclosefrom_np` and `_addchdir_np`, looked up at
    // run time: Swift's Glibc module does not import these GNU extensions.
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private typealias ChangeDirectory = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private static let closeFrom: CloseFrom? = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast($0, to: CloseFrom.self)
    }
    private static let changeDirectory: ChangeDirectory? = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addchdir_np").map {
        unsafeBitCast($0, to: ChangeDirectory.self)
    }

    deinit {
        // Reap a child that has ended, so no zombie is left behind by a dropped handle.
        _ = isRunning
    }

    /// Whether the child still runs; reaps it (without waiting) once it has ended.
    public var isRunning: Bool {
        reaped.withLock { status in
            guard status == nil else { return false }
            var raw: Int32 = 0
            let answer = waitpid(processIdentifier, &raw, WNOHANG)
            if answer == processIdentifier { status = raw }
            // Anything else from waitpid (ECHILD: not ours to reap) counts as ended.
            return answer == 0
        }
    }

    /// Blocks until the child has ended, and reaps it. `waitid` with `WNOWAIT` waits
    /// without reaping, so any number of threads may wait at once and the PID cannot be
    /// reused before the status is stored.
    public func waitUntilExit() {
        while isRunning {
            var info = siginfo_t()
            if waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT) < 0, errno != EINTR { break }
        }
    }

    /// The exit code, or the number of the signal that ended the child (as `Process`
    /// reports it); nil while it runs.
    public var terminationStatus: Int32? {
        guard !isRunning, let raw = reaped.withLock({ $0 }) else { return nil }
        let signal = raw & 0x7f
        return signal == 0 ? (raw >> 8) & 0xff : signal
    }

    /// Sends SIGTERM, unless the child has already been reaped (its PID may be another's).
    public func terminate() {
        send(SIGTERM)
    }

    /// Sends `signal`, unless the child has already been reaped.
    public func send(_ signal: Int32) {
        reaped.withLock { status in
            if status == nil { _ = kill(processIdentifier, signal) }
        }
    }
}
