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
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        for name in removing { merged.removeValue(forKey: name) }
        merged.merge(environment) { $1 }
        process.environment = merged
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input ?? FileHandle.nullDevice
        try ProcessSpawning.run(process)
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
    public static func start(_ executable: URL, _ arguments: [String], environment: [String: String] = [:], mergingErrors: Bool = false) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = mergingErrors ? output : FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try ProcessSpawning.run(process)
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
    ) async throws -> (process: Process, line: String) {
        let (process, output) = try start(executable, arguments, environment: environment, mergingErrors: true)
        let (line, transcript) = await firstLine(of: output, where: ready)
        guard let line else {
            stop(process)
            throw TestSupportError("\(name) did not start: \(transcript)")
        }
        Thread { _ = try? output.fileHandleForReading.readToEnd() }.start()
        return (process, line)
    }

    /// A tool found on `PATH` (`python3`, `openssl`, …) run to its end: its status and its
    /// output and errors together. The read and the wait happen on a thread of their own
    /// (``Blocking``): a Python script can take seconds under load, and waiting for it on
    /// one of the cooperative pool's two threads stalled every other test in a CI run (a
    /// PostgreSQL store test then timed out for want of a thread to read its answer).
    public static func tool(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try ProcessSpawning.run(process)
        let output = await drain(pipe)
        let status = await waitForExit(process)
        return (status, String(decoding: output, as: UTF8.self))
    }

    /// A pipe read to its end.
    public static func drain(_ pipe: Pipe) async -> Data {
        await Blocking.run { pipe.fileHandleForReading.readDataToEndOfFile() }
    }


    /// The process's exit status, once it exits.
    public static func waitForExit(_ process: Process) async -> Int32 {
        await Blocking.run {
            process.waitUntilExit()
            return process.terminationStatus
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
                let chunk = pipe.fileHandleForReading.availableData
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
    /// outlives its test. Whether the child has ended is read from `/proc`, not from
    /// `Process.isRunning`: Foundation updates that from a Dispatch source, which under load
    /// can lag by seconds; waiting on it held one of the cooperative pool's two threads for
    /// the whole grace and stalled every other test (a CI run of 2026-11-24).
    public static func stop(_ process: Process, grace: TimeInterval = 5) {
        let pid = process.processIdentifier
        // Until Foundation reaps it (isRunning false), the PID cannot belong to anyone else.
        let ended = { !process.isRunning || hasEnded(pid) }
        guard pid > 0, !ended() else { return }
        kill(pid, SIGTERM)
        let deadline = Date().addingTimeInterval(grace)
        while !ended(), Date() < deadline { usleep(5_000) }
        if !ended() {
            kill(pid, SIGKILL)
            print("\(process.executableURL?.lastPathComponent ?? "a child") did not stop on SIGTERM within \(grace) s; killed")
        }
    }

    /// Whether child `pid` has ended: gone, or a zombie (`Z`/`X` in `/proc/PID/stat`) that
    /// Foundation has not reaped yet.
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
