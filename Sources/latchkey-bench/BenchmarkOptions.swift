/// Command-line options of the benchmark (kept tiny: no argument parser needed yet).
struct BenchmarkOptions {
    /// Measuring time per operation and per round, in seconds.
    var seconds: Double = 2

    init(arguments: [String]) {
        if let index = arguments.firstIndex(of: "--seconds"), index + 1 < arguments.count,
           let value = Double(arguments[index + 1]), value > 0 {
            seconds = value
        }
    }
}
