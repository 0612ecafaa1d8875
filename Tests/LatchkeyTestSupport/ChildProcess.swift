public import Foundation

/// Programs the tests start: the package's own executables (built next to the test
/// bundle), `latchkey serve`, and tools such as python3. Blocking reads and waits run on
/// threads of their own: not on one of the (two, on these machines) threads of Swift's
/// cooperative pool, and not on Dispatch's global queue either, whose few threads a
/// long read (a server's output) would hold and so stall every other test's wait.
public enum ChildProcess {
    /// What a finished program printed.
    public struct Output: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
    }

    /// The package's executable `name`, which SwiftPM builds next to the test bundle.
    public static func executable(_ name: String) -> URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Runs `executable arguments…` to its end, stdin from /dev/null unless `input` is
    /// given; `environment` is added to this process's own, and `removing` taken out.
    public static func run(
        _ executable: URL,
        _ arguments: [String],
        environment: [String: String] = [:],
        removing: [String] = [],
        input: FileHandle? = nil
    ) async throws -> Output {
        var merged = ProcessInfo.processInfo.environment
        for name in removing { merged.removeValue(forKey: name) }
        merged.merge(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        let process = try SpawnedProcess(
            executable, arguments, environment: merged, stdin: input.map { .file($0) } ?? .null, stdout: .pipe(out), stderr: .pipe(err)
        )
        // Both pipes are drained while the program runs, so a large output cannot block it.
        async let stdout = drain(out)
        async let stderr = drain(err)
        let (outData, errData) = await (stdout, stderr)
        let status = await waitForExit(process)
        return Output(status: status, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Starts `executable arguments…` in the background, stdin from /dev/null and stderr
    /// discarded (or, with `mergingErrors`, in the same pipe); returns it with the pipe its
    /// stdout goes to.
    public static func start(_ executable: URL, _ arguments: [String], environment: [String: String] = [:], mergingErrors: Bool = false) throws -> (SpawnedProcess, Pipe) {
        let output = Pipe()
        let process = try SpawnedProcess(
            executable, arguments, environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
            stdout: .pipe(output), stderr: mergingErrors ? .pipe(output) : .null
        )
        return (process, output)
    }

    /// Starts a helper server (an SMTP sink, an Authlib peer, chromedriver) with its
    /// stdout and stderr in one pipe, and waits for the line that says it is ready; answers
    /// the process and that line. A helper that ends or stays silent is stopped and its
    /// output is in the error. The pipe is drained from then on, so a chatty helper never
    /// blocks on it.
    public static func startHelper(
        _ executable: URL, _ arguments: [String], name: String, environment: [String: String] = [:],
        ready: @escaping @Sendable (Substring) -> Bool
    ) async throws -> (process: SpawnedProcess, line: String) {
        let (process, output) = try start(executable, arguments, environment: environment, mergingErrors: true)
        let (line, transcript) = await firstLine(of: output, where: ready)
        guard let line else {
            stop(process)
            throw TestSupportError("\(name) did not start: \(transcript)")
        }
        PipeReading.drainInBackground(output.fileHandleForReading)
        return (process, line)
    }

    /// A tool found on `PATH` (`python3`, `openssl`, …) run to its end: its status and its
    /// output and errors together. The read and the wait happen on a thread of their own
    /// (``Blocking``): a Python script can take seconds under load, and waiting for it on
    /// one of the cooperative pool's two threads stalled every other test in a CI run (a
    /// PostgreSQL store test then timed out for want of a thread to read its answer).
    /// `environment` is added to this process's own (a password for `psql`, which must not
    /// go in its arguments).
    public static func tool(_ arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32, output: String) {
        let pipe = Pipe()
        let process = try SpawnedProcess(
            URL(fileURLWithPath: "/usr/bin/env"), arguments,
            environment: environment.isEmpty ? nil : ProcessInfo.processInfo.environment.merging(environment) { $1 },
            stdout: .pipe(pipe), stderr: .pipe(pipe)
        )
        let output = await drain(pipe)
        let status = await waitForExit(process)
        return (status, String(decoding: output, as: UTF8.self))
    }

    /// A pipe read to its end.
    public static func drain(_ pipe: Pipe) async -> Data {
        await Blocking.run { PipeReading.all(pipe.fileHandleForReading) }
    }


    /// The process's exit status, once it exits.
    public static func waitForExit(_ process: SpawnedProcess) async -> Int32 {
        await Blocking.run {
            process.waitUntilExit()
            return process.terminationStatus ?? -1
        }
    }

    /// Reads `pipe` until a line satisfies `matches` (returned), the pipe ends, or
    /// `timeout` passes (nil). Everything read is in `transcript` for error messages.
    public static func firstLine(
        of pipe: Pipe,
        timeout: Duration = .seconds(30),
        where matches: @escaping @Sendable (Substring) -> Bool
    ) async -> (line: String?, transcript: String) {
        let deadline = Date().addingTimeInterval(Double(timeout.components.seconds))
        return await Blocking.run {
            var text = ""
            while Date() < deadline {
                let chunk = PipeReading.chunk(pipe.fileHandleForReading)
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
                if let line = text.split(separator: "\n").first(where: matches) {
                    return (String(line), text)
                }
            }
            return (nil, text)
        }
    }

    /// SIGTERM (a server shuts down gracefully), then SIGKILL after `grace`, so no child
    /// outlives its test. Whether the child has ended is asked of the kernel
    /// (``SpawnedProcess/isRunning``, `waitpid` without waiting), polled here rather than
    /// waited for, so a child that ignores SIGTERM still gets its SIGKILL on time.
    public static func stop(_ process: SpawnedProcess, grace: TimeInterval = 5) {
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(grace)
        while process.isRunning, Date() < deadline { usleep(5_000) }
        if process.isRunning {
            process.send(SIGKILL)
            print("\(process.executableURL.lastPathComponent) did not stop on SIGTERM within \(grace) s; killed")
        }
    }

    /// Whether process `pid` has ended: gone, or a zombie (`Z`/`X` in `/proc/PID/stat`)
    /// not reaped yet. For processes that are not our children (a browser chromedriver
    /// started); of our own, ``SpawnedProcess/isRunning`` answers exactly.
    public static func hasEnded(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return true }
        let state = stat[stat.index(after: close)...].drop(while: { $0 == " " }).first
        return state == "Z" || state == "X"
    }

    /// Every process below `pid` (children, theirs, …), read from `/proc`: a helper such
    /// as chromedriver starts browsers that outlive it when it is stopped.
    public static func descendants(of pid: Int32) -> [Int32] {
        var found: [Int32] = []
        var pending = [pid]
        while let next = pending.popLast(), found.count < 4096 {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(next)/task")) ?? []
            for task in tasks {
                let text = (try? String(contentsOfFile: "/proc/\(next)/task/\(task)/children", encoding: .utf8)) ?? ""
                let children = text.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
                found += children
                pending += children
            }
        }
        return found
    }
}
