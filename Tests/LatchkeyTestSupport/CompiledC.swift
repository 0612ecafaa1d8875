public import Foundation
import Synchronization

/// C programs and shims of the tests' own (`Tests/PowerCut/powercut.c`,
/// `Tests/PAMThreads/pam_threads.c`), compiled once per test run with the machine's C
/// compiler into a directory of their own.
public enum CompiledC {
    private static let built = Mutex<[String: (url: URL, folder: TemporaryDirectory)]>([:])

    /// `source` compiled as `name` with `flags` before and `libraries` after it, by the
    /// first of clang and cc that succeeds; the same file for every later call.
    public static func build(_ source: URL, as name: String, flags: [String], libraries: [String]) async throws -> URL {
        if let known = built.withLock({ $0[name]?.url }) { return known }
        let folder = try TemporaryDirectory()
        let output = folder.url.appendingPathComponent(name)
        var failures: [String] = []
        for compiler in ["clang", "cc"] {
            let (status, said) = try await ChildProcess.tool([compiler] + flags + ["-o", output.path, source.path] + libraries)
            if status == 0 {
                return built.withLock { compiled in
                    if let earlier = compiled[name] { return earlier.url }
                    compiled[name] = (output, folder)
                    return output
                }
            }
            failures.append("\(compiler): \(said)")
        }
        throw TestSupportError("could not compile \(source.lastPathComponent): \(failures.joined(separator: "; "))")
    }
}
