public import Foundation

/// The Python interop checks (`Tests/Interop/*.py`): whether this machine has the packages
/// they need, and running one. `.ci/run` installs them; a test that finds them missing
/// prints that it was skipped.
public enum PythonInterop {
    /// The folder with the scripts.
    public static let scripts = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Interop")

    /// Whether `python3` can import every module in `modules`.
    public static func available(_ modules: [String]) -> Bool {
        (try? ChildProcess.tool(["python3", "-c", "import " + modules.joined(separator: ", ")]).status) == 0
    }

    /// Runs `Tests/Interop/<script>` with `arguments`: its status and its output.
    public static func run(_ script: String, _ arguments: [String] = []) throws -> (status: Int32, output: String) {
        try ChildProcess.tool(["python3", scripts.appendingPathComponent(script).path] + arguments)
    }
}
