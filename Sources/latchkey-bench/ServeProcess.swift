import Foundation
import LatchkeyOAuth
import LatchkeyTestSupport

/// A `latchkey serve` process the persisted benchmark starts (from the same build as the
/// benchmark), so the server's CPU is its own and can be read from /proc.
struct ServeProcess {
    let process: SpawnedProcess
    let issuer: URL

    static var binary: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("latchkey")
    }

    /// The binary a host runs client commands with (`latchkey-without-provider`, the
    /// package's /usr/bin/latchkey) when it was built beside the benchmark
    /// (performance-report.sh builds it), else the full one.
    static var clientBinary: URL {
        let host = binary.deletingLastPathComponent().appendingPathComponent("latchkey-without-provider")
        return FileManager.default.isExecutableFile(atPath: host.path) ? host : binary
    }

    /// Starts `latchkey serve` with `arguments` and waits for its issuer line.
    /// The admin token of every provider the benchmark runs, in process or not.
    static let adminToken = "bench-admin-token-for-the-benchmark"

    /// `LATCHKEY_BENCH_NO_AUDIT=1`: every provider the run starts keeps no audit log, to
    /// compare a build with one against a build from before it in the same conditions.
    static let auditOff = ProcessInfo.processInfo.environment["LATCHKEY_BENCH_NO_AUDIT"] == "1"

    static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> ServeProcess {
        let arguments = auditOff && !arguments.contains("--no-audit") ? arguments + ["--no-audit"] : arguments
        let output = Pipe()
        let process = try SpawnedProcess(
            binary, ["serve", "--json", "--rate-limit-per-minute", "100000000"] + arguments,
            environment: ProcessInfo.processInfo.environment.merging(["LATCHKEY_ADMIN_TOKEN": Self.adminToken]) { $1 }.merging(environment) { $1 },
            stdout: .pipe(output)
        )
        return try ready(process, output: output, name: "latchkey serve \(arguments.joined(separator: " "))").server
    }

    /// A server the benchmark started, once its ready line (one JSON object with its
    /// `issuer`, up to the first newline) has come on `output`, with that object; a server
    /// that stops or says anything else first is stopped, and the error quotes what it said.
    static func ready(_ process: SpawnedProcess, output: Pipe, name: String) throws -> (server: ServeProcess, line: JSONValue) {
        var text = ""
        while !text.contains("\n") {
            let chunk = PipeReading.chunk(output.fileHandleForReading)
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let object = try? JSONValue(json: Data(text.utf8)),
              let issuer = object["issuer"]?.stringValue.flatMap(URL.init(string:)) else {
            process.terminate()
            throw BenchmarkError("\(name) did not start: \(text)")
        }
        return (ServeProcess(process: process, issuer: issuer), object)
    }

    /// User plus system CPU seconds the process has used (/proc/PID/stat fields 14, 15).
    var cpuSeconds: Double {
        let times = cpuTimes
        return times.user + times.system
    }

    /// The CPU seconds the process has spent in user space and in the kernel, apart: the
    /// kernel's share of a request (TCP on loopback, epoll) is much the same whichever
    /// server answers, so the split shows where two servers differ.
    var cpuTimes: (user: Double, system: Double) {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return (0, 0) }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command name: state is field 3, so utime (14) and stime (15) are at 11, 12.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return (0, 0) }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return (user / ticks, system / ticks)
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
    }
}
