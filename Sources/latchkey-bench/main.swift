// latchkey-bench: throughput of Latchkey's operations next to a reference measured in
// the same run, reported as ratios because the machines are noisy.
// Run with: swift run -c release latchkey-bench [--seconds S] [--only signatures|vault|webauthn|oauth|provider]

let options = BenchmarkOptions(arguments: CommandLine.arguments)
if options.runs("signatures") { try SignatureBenchmark(seconds: options.seconds).run().print() }
if options.runs("vault") { try VaultBenchmark(seconds: options.seconds).run().print() }
if options.runs("webauthn") { try WebAuthnBenchmark(seconds: options.seconds).run().print() }
if options.runs("oauth") { try OAuthBenchmark(seconds: options.seconds).run().print() }
// The provider benchmark is asynchronous, so it runs last, after the synchronous loops.
if options.runs("provider") { try await ProviderBenchmark(seconds: options.seconds).run().print() }
