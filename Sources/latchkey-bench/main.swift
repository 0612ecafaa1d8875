// latchkey-bench: throughput of Latchkey's operations next to a reference measured in
// the same run, reported as ratios because the machines are noisy.
// Run with: swift run -c release latchkey-bench [--seconds S]

let options = BenchmarkOptions(arguments: CommandLine.arguments)
let report = try SignatureBenchmark(seconds: options.seconds).run()
report.print()
