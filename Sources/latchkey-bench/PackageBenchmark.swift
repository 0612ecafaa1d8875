import Foundation
import Glibc
import LatchkeyTestSupport

/// The Debian packages (issue 75), from the newest `.build-deb/latchkey_*_amd64.deb` and the
/// latchkey-provider package of the same version beside it
/// (`scripts/package-deb.sh`; `LATCHKEY_BENCH_DEB` names another):
/// - the package's size and its installed size, next to what `openssh-client` takes on
///   this machine (dpkg's record of it);
/// - the stripped host binary it installs, next to the stripped single binary of issue 75's
///   start (95 MB, which held the provider's server too), against a target of half;
/// - `latchkey --version` from that binary (unpacked with `dpkg-deb -x`, so the very bytes
///   an install puts in `/usr/bin`), a new process each time: wall time to exit and peak
///   resident memory, next to `ssh -V` in alternating runs, 20 at least. The peak is GNU
///   time's (`/usr/bin/time -f %M`): a child this process started would carry this
///   process's own peak in its `ru_maxrss` (posix_spawn shares the memory map until the
///   exec, and the kernel keeps the larger of the two), so a small process starts it.
struct PackageBenchmark {
    var seconds: Double

    /// `/usr/bin/latchkey` stripped, as the one package of the tree held it when issue 75
    /// was filed: 97,152,760 bytes (the release build at commit bb22cb6, `strip`ped).
    static let singleBinaryBytes = 97_152_760.0

    func run() async throws -> Report {
        var report = Report(title: "The Debian package: sizes and the installed binary's start")
        guard let deb = Self.package() else {
            report.notes = ["skipped: no .build-deb/latchkey_*_amd64.deb (run scripts/package-deb.sh first, or set LATCHKEY_BENCH_DEB)"]
            return report
        }
        let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("latchkey-bench-deb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        guard try Self.run("/usr/bin/dpkg-deb", ["-x", deb.path, scratch.path]) == 0 else {
            throw BenchmarkError("dpkg-deb -x \(deb.lastPathComponent) failed")
        }
        let binary = scratch.appendingPathComponent("usr/bin/latchkey").path
        let ssh = "/usr/bin/ssh"
        let debBytes = Double(try FileManager.default.attributesOfItem(atPath: deb.path)[.size] as? Int ?? 0)
        let installed = Double(try Self.output("/usr/bin/dpkg-deb", ["-f", deb.path, "Installed-Size"]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        let sshInstalled = Double((try? Self.output("/usr/bin/dpkg-query", ["-W", "-f", "${Installed-Size}", "openssh-client"])) ?? "") ?? 0
        let binaryBytes = Double(try FileManager.default.attributesOfItem(atPath: binary)[.size] as? Int ?? 0)
        report.notes = [
            "\(deb.lastPathComponent); process figures are medians of alternating runs of latchkey --version and ssh -V (OpenSSH's client), each a new process",
        ]
        report.lines.append(ReportLine(
            name: "latchkey package, installed KiB", latchkey: installed, reference: sshInstalled > 0 ? sshInstalled : nil,
            referenceName: "openssh-client installed, KiB"
        ))
        report.lines.append(ReportLine(name: "latchkey package file, MiB", latchkey: debBytes / 1_048_576, reference: nil, referenceName: ""))
        report.lines.append(ReportLine(
            name: "host binary /usr/bin/latchkey, stripped MiB", latchkey: binaryBytes / 1_048_576, reference: Self.singleBinaryBytes / 1_048_576,
            referenceName: "the single binary when issue 75 was filed, stripped MiB", target: .ratioAtMost(0.5)
        ))
        // latchkey-provider, built beside it with the same version: what only a provider's
        // host installs.
        let provider = deb.deletingLastPathComponent().appendingPathComponent(deb.lastPathComponent.replacingOccurrences(of: "latchkey_", with: "latchkey-provider_"))
        if FileManager.default.fileExists(atPath: provider.path) {
            let providerScratch = scratch.appendingPathComponent("provider")
            guard try Self.run("/usr/bin/dpkg-deb", ["-x", provider.path, providerScratch.path]) == 0 else {
                throw BenchmarkError("dpkg-deb -x \(provider.lastPathComponent) failed")
            }
            let providerInstalled = Double(try Self.output("/usr/bin/dpkg-deb", ["-f", provider.path, "Installed-Size"]).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
            let providerBinary = providerScratch.appendingPathComponent("usr/libexec/latchkey/latchkey-provider").path
            let providerBytes = Double(try FileManager.default.attributesOfItem(atPath: providerBinary)[.size] as? Int ?? 0)
            report.lines.append(ReportLine(name: "latchkey-provider package, installed KiB", latchkey: providerInstalled, reference: nil, referenceName: ""))
            report.lines.append(ReportLine(
                name: "provider binary latchkey-provider, stripped MiB", latchkey: providerBytes / 1_048_576, reference: Self.singleBinaryBytes / 1_048_576,
                referenceName: "the single binary when issue 75 was filed, stripped MiB"
            ))
        } else {
            report.notes.append("no \(provider.lastPathComponent) beside it: the provider's package rows are left out")
        }
        guard FileManager.default.isExecutableFile(atPath: ssh) else {
            report.notes.append("ssh not found: the start-up rows need OpenSSH's client")
            return report
        }
        _ = try Self.measure(binary, ["--version"])
        _ = try Self.measure(ssh, ["-V"])
        var (ours, theirs) = ([Double](), [Double]())
        let runs = max(20, Int(seconds * 10))
        for _ in 0..<runs {
            ours.append(try Self.measure(binary, ["--version"]))
            theirs.append(try Self.measure(ssh, ["-V"]))
        }
        report.lines.append(ReportLine(
            name: "latchkey --version, ms", latchkey: AgentBenchmark.median(ours) * 1000,
            reference: AgentBenchmark.median(theirs) * 1000, referenceName: "ssh -V, ms"
        ))
        guard FileManager.default.isExecutableFile(atPath: Self.gnuTime) else {
            report.notes.append("\(Self.gnuTime) not found (Debian's time package): no peak resident memory rows")
            return report
        }
        var (ourPeaks, theirPeaks) = ([Double](), [Double]())
        for _ in 0..<runs {
            ourPeaks.append(try Self.peakResident(binary, ["--version"]))
            theirPeaks.append(try Self.peakResident(ssh, ["-V"]))
        }
        report.lines.append(ReportLine(
            name: "latchkey --version, peak resident MiB", latchkey: AgentBenchmark.median(ourPeaks),
            reference: AgentBenchmark.median(theirPeaks), referenceName: "ssh -V, peak resident MiB"
        ))
        return report
    }

    /// `LATCHKEY_BENCH_DEB`, else the newest package under `.build-deb/`.
    static func package() -> URL? {
        if let named = ProcessInfo.processInfo.environment["LATCHKEY_BENCH_DEB"], !named.isEmpty {
            return URL(fileURLWithPath: named)
        }
        let directory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build-deb")
        let debs = ((try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: [.contentModificationDateKey])) ?? [])
            .filter { $0.lastPathComponent.hasPrefix("latchkey_") && $0.lastPathComponent.hasSuffix("_amd64.deb") }
        return debs.max { first, second in
            let dates = [first, second].map { (try? $0.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate) ?? .distantPast }
            return dates[0] < dates[1]
        }
    }

    static let gnuTime = "/usr/bin/time"

    /// Seconds from starting `path arguments…` (output discarded) to reaping it.
    static func measure(_ path: String, _ arguments: [String]) throws -> Double {
        let start = ContinuousClock.now
        let status = try run(path, arguments)
        let elapsed = ContinuousClock.now - start
        guard status == 0 else { throw BenchmarkError("\(path) \(arguments.joined(separator: " ")) exited with status \(status)") }
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// `path arguments…`'s peak resident memory in MiB, as GNU time reports it (KiB).
    static func peakResident(_ path: String, _ arguments: [String]) throws -> Double {
        let file = NSTemporaryDirectory() + "/latchkey-bench-peak-\(UUID().uuidString)"
        defer { unlink(file) }
        guard try run(gnuTime, ["-f", "%M", "-o", file, path] + arguments) == 0,
              let kibibytes = Double((try? String(contentsOfFile: file, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "")
        else { throw BenchmarkError("\(gnuTime) could not measure \(path)") }
        return kibibytes / 1024
    }

    /// `path arguments…`'s exit status, its output discarded.
    static func run(_ path: String, _ arguments: [String]) throws -> Int32 {
        let process = try SpawnedProcess(URL(fileURLWithPath: path), arguments)
        process.waitUntilExit()
        return process.terminationStatus ?? -1
    }

    /// `path arguments…`'s standard output (a small answer: dpkg's fields).
    static func output(_ path: String, _ arguments: [String]) throws -> String {
        let pipe = Pipe()
        let process = try SpawnedProcess(URL(fileURLWithPath: path), arguments, stdout: .pipe(pipe))
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchmarkError("\(path) exited with status \(process.terminationStatus ?? -1)") }
        return String(decoding: data, as: UTF8.self)
    }
}
