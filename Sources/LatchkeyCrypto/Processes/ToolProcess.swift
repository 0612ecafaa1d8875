import Glibc

/// Another program run to its end, its standard output read (and its standard error with
/// it, or dropped), its standard input `/dev/null`: a desktop's `xdg-mime` and
/// `update-desktop-database`, the benchmark's `openssl speed`.
///
/// `posix_spawn`, not Foundation's `Process`, which lives in swift-corelibs-foundation and
/// brings ICU's data into every binary that links it (docs/PERFORMANCE.md, "The Debian
/// package"). Like `Process`, the child starts with no signal blocked and every signal's
/// default action, whatever the spawning thread had: a thread of Swift's concurrency pool
/// blocks some, and `openssl speed` stops each test with SIGALRM.
package struct ToolProcess: Sendable {
    /// What the tool said, the first `maximumOutput` bytes of it (the rest is read and
    /// dropped, so a chatty tool never blocks on a full pipe), and how it ended.
    package struct Outcome: Sendable {
        /// The exit status, or 128 + the signal that ended it (as a shell reports it).
        package let status: Int32
        package let output: [UInt8]
    }

    /// The program: a path, or a name looked up on `PATH` (`posix_spawnp`).
    package let program: String
    /// The child's whole environment; `nil` passes this process's on.
    package let environment: [String: String]?
    /// Whether standard error goes with standard output (else to `/dev/null`).
    package let keepsStandardError: Bool
    package let maximumOutput: Int

    package init(_ program: String, environment: [String: String]? = nil, keepsStandardError: Bool = true, maximumOutput: Int = 64 * 1024) {
        self.program = program
        self.environment = environment
        self.keepsStandardError = keepsStandardError
        self.maximumOutput = maximumOutput
    }

    /// Runs the program and waits for it; `nil` when it cannot be started at all.
    package func run(_ arguments: [String]) -> Outcome? {
        var pipe: [Int32] = [0, 0]
        // Close-on-exec, so no child another thread spawns meanwhile keeps the write end
        // open (and this read from never ending). `pipe2` is not in Swift's Glibc module.
        guard Glibc.pipe(&pipe) == 0 else { return nil }
        _ = fcntl(pipe[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipe[1], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        posix_spawn_file_actions_adddup2(&actions, pipe[1], STDOUT_FILENO)
        if keepsStandardError {
            posix_spawn_file_actions_adddup2(&actions, pipe[1], STDERR_FILENO)
        } else {
            posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer {
            argv.forEach { free($0) }
            envp?.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned = envp.map { posix_spawnp(&pid, program, &actions, &attributes, argv, $0) }
            ?? posix_spawnp(&pid, program, &actions, &attributes, argv, environ)
        close(pipe[1])
        defer { close(pipe[0]) }
        guard spawned == 0 else { return nil }
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(pipe[0], &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            output.append(contentsOf: buffer[0..<min(count, maximumOutput - output.count)])
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        // WIFEXITED/WEXITSTATUS are macros Swift cannot import: the low seven bits hold
        // the signal that ended the child, if any; the next eight its exit status.
        let signal = status & 0x7F
        return Outcome(status: signal == 0 ? (status >> 8) & 0xFF : 128 + signal, output: output)
    }
}
