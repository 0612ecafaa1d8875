/// Command-line options of the benchmark (kept tiny: no argument parser needed).
struct BenchmarkOptions {
    /// Measuring time per operation and per round, in seconds.
    var seconds: Double = 2
    /// The one group to run (`--only NAME`), or every group.
    var only: String?
    /// Markdown tables (for docs/PERFORMANCE.md) instead of plain text.
    var markdown = false
    /// Provider and persisted provider benchmarks: one concurrency instead of their list
    /// (`--clients N`), and no floor (`--no-floor`), to profile full authentications alone,
    /// e.g. `perf record -g .build/release/latchkey-bench --only provider --clients 8 --no-floor`,
    /// or `--only store --sizes none --creations 0 --clients 16 --no-floor` with `perf record
    /// -p` on the `latchkey serve` it starts.
    var clients: Int?
    var floor = true
    /// Persisted provider only: the identity counts to seed (`--sizes 0,10000`); `--sizes
    /// none` measures the in-memory store alone (with `--creations 0`, a quick check of one
    /// change's effect on the CPU per sign-in).
    var sizes: [Int]?
    /// Persisted provider only: identities created through the admin API (`--creations N`).
    var creations = 100_000

    init(arguments: [String]) {
        if let index = arguments.firstIndex(of: "--seconds"), index + 1 < arguments.count,
           let value = Double(arguments[index + 1]), value > 0 {
            seconds = value
        }
        markdown = arguments.contains("--markdown")
        floor = !arguments.contains("--no-floor")
        if let index = arguments.firstIndex(of: "--clients"), index + 1 < arguments.count,
           let value = Int(arguments[index + 1]), (1...256).contains(value) {
            clients = value
        }
        if let index = arguments.firstIndex(of: "--creations"), index + 1 < arguments.count, let value = Int(arguments[index + 1]), value == 0 || value >= 100 {
            creations = value
        }
        if let index = arguments.firstIndex(of: "--sizes"), index + 1 < arguments.count {
            sizes = arguments[index + 1] == "none" ? [] : arguments[index + 1].split(separator: ",").compactMap { Int($0) }.filter { (0...10_000_000).contains($0) }
        }
        if let index = arguments.firstIndex(of: "--only"), index + 1 < arguments.count {
            only = arguments[index + 1]
        }
    }

    func runs(_ group: String) -> Bool {
        only == nil || only == group
    }
}
