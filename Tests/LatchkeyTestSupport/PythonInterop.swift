public import Foundation
import Synchronization

/// The Python interop checks (`Tests/Interop/*.py`): whether this machine has the packages
/// they need, and running one. `.ci/run` installs them; a test that finds them missing
/// prints that it was skipped.
public enum PythonInterop {
    /// The folder with the scripts.
    public static let scripts = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Interop")

    /// Whether `python3` can import every module in `modules`. Asked once per list in a
    /// run, since several suites ask the same and each asking starts Python.
    public static func available(_ modules: [String]) async -> Bool {
        let key = modules.joined(separator: ", ")
        if let known = answers.withLock({ $0[key] }) { return known }
        let found = (try? await ChildProcess.tool(["python3", "-c", "import " + key]).status) == 0
        answers.withLock { $0[key] = found }
        return found
    }

    private static let answers = Mutex<[String: Bool]>([:])

    /// Runs `Tests/Interop/<script>` with `arguments`: its status and its output.
    public static func run(_ script: String, _ arguments: [String] = []) async throws -> (status: Int32, output: String) {
        try await ChildProcess.tool(["python3", scripts.appendingPathComponent(script).path] + arguments)
    }
}
