/// Command-line options of the benchmark (kept tiny: no argument parser needed).
struct BenchmarkOptions {
    /// Measuring time per operation and per round, in seconds.
    var seconds: Double = 2
    /// The one group to run (`--only NAME`), or every group.
    var only: String?

    init(arguments: [String]) {
        if let index = arguments.firstIndex(of: "--seconds"), index + 1 < arguments.count,
           let value = Double(arguments[index + 1]), value > 0 {
            seconds = value
        }
        if let index = arguments.firstIndex(of: "--only"), index + 1 < arguments.count {
            only = arguments[index + 1]
        }
    }

    func runs(_ group: String) -> Bool {
        only == nil || only == group
    }
}
