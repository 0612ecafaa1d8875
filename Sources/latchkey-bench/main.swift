// latchkey-bench: throughput of Latchkey's operations next to a reference measured in
// the same run, reported as ratios because the machines are noisy.
// Run with: swift run -c release latchkey-bench [--seconds S]

let options = BenchmarkOptions(arguments: CommandLine.arguments)
try SignatureBenchmark(seconds: options.seconds).run().print()
try VaultBenchmark(seconds: options.seconds).run().print()
try WebAuthnBenchmark(seconds: options.seconds).run().print()
try OAuthBenchmark(seconds: options.seconds).run().print()
// The provider benchmark is asynchronous; it runs last, off the main thread's loops above.
try await ProviderBenchmark(seconds: options.seconds).run().print()
