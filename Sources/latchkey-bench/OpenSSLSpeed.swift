import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `openssl speed`'s own figures, from the `openssl` binary of the same OpenSSL build
/// Latchkey links (Debian's `openssl` package), run in the same benchmark.
struct OpenSSLSpeed {
    var ecdsaP256Sign: Double?
    var ecdsaP256Verify: Double?
    var ed25519Sign: Double?
    var ed25519Verify: Double?

    /// The median of several runs, figure by figure (nil where any run lacks it).
    static func median(_ runs: [OpenSSLSpeed]) -> OpenSSLSpeed {
        func pick(_ value: (OpenSSLSpeed) -> Double?) -> Double? {
            let values = runs.compactMap(value)
            return values.count == runs.count && !values.isEmpty ? latchkey_bench.median(values) : nil
        }
        return OpenSSLSpeed(
            ecdsaP256Sign: pick(\.ecdsaP256Sign), ecdsaP256Verify: pick(\.ecdsaP256Verify),
            ed25519Sign: pick(\.ed25519Sign), ed25519Verify: pick(\.ed25519Verify)
        )
    }

    /// Runs `openssl speed -seconds S ecdsap256 ed25519`; nil figures when the binary is
    /// missing or its output changed.
    static func measure(seconds: Int) -> OpenSSLSpeed {
        var speed = OpenSSLSpeed()
        guard let output = run(["openssl", "speed", "-seconds", String(seconds), "ecdsap256", "ed25519"]) else {
            print("openssl speed could not run; reference figures are missing")
            return speed
        }
        for line in output.split(separator: "\n") {
            // e.g. " 256 bits ecdsa (nistp256)   0.0000s   0.0001s  35094.9  11790.0"
            let numbers = line.split(separator: " ").compactMap { Double($0) }
            guard numbers.count >= 3 else { continue }
            let (sign, verify) = (numbers[numbers.count - 2], numbers[numbers.count - 1])
            if line.contains("ecdsa (nistp256)") {
                speed.ecdsaP256Sign = sign
                speed.ecdsaP256Verify = verify
            } else if line.contains("EdDSA (Ed25519)") {
                speed.ed25519Sign = sign
                speed.ed25519Verify = verify
            }
        }
        return speed
    }

    /// Runs a command and returns its standard output. Spawned with an empty signal mask
    /// and default dispositions: `openssl speed` stops each test with SIGALRM, which a
    /// thread of Swift's concurrency pool has blocked, and a child inherits the mask.
    private static func run(_ arguments: [String]) -> String? {
        var pipe: [Int32] = [0, 0]
        guard Glibc.pipe(&pipe) == 0 else { return nil }
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        posix_spawn_file_actions_adddup2(&actions, pipe[1], STDOUT_FILENO)
        posix_spawn_file_actions_addclose(&actions, pipe[0])
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, environ)
        close(pipe[1])
        defer { close(pipe[0]) }
        guard spawned == 0 else { return nil }
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(pipe[0], &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            output.append(contentsOf: buffer[0..<count])
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return String(decoding: output, as: UTF8.self)
    }
}
