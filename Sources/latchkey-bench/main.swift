// latchkey-bench: throughput of Latchkey's operations next to a reference measured in
// the same run, reported as ratios because the machines are noisy.
// Run with: swift run -c release latchkey-bench [--seconds S] [--only signatures|vault|tpm|webauthn|oauth|provider|dpop|agent|ssh|fleet|host|package|attack|peer|go-peer|store|agents] [--sizes 0,10000] [--markdown] [--clients N] [--no-floor]
// scripts/performance-report.sh turns a --markdown run into docs/PERFORMANCE.md.

// The bare SwiftNIO server the Go peer benchmark starts as a process of its own.
if CommandLine.arguments.dropFirst().first == BareHTTPServer.argument { try BareHTTPServer.run() }
let options = BenchmarkOptions(arguments: CommandLine.arguments)
var reports: [Report] = []
@MainActor func finish(_ report: Report) {
    report.print(markdown: options.markdown)
    reports.append(report)
}
if options.runs("signatures") { finish(try SignatureBenchmark(seconds: options.seconds).run()) }
if options.runs("vault") { finish(try VaultBenchmark(seconds: options.seconds).run()) }
if options.runs("tpm") { finish(try TPMBenchmark(seconds: options.seconds).run()) }
if options.runs("webauthn") { finish(try WebAuthnBenchmark(seconds: options.seconds).run()) }
if options.runs("oauth") { finish(try OAuthBenchmark(seconds: options.seconds).run()) }
// The provider benchmark is asynchronous, so it runs last, after the synchronous loops.
if options.runs("provider") { finish(try await ProviderBenchmark(seconds: options.seconds, concurrencies: options.clients.map { [$0] } ?? ProviderBenchmark.concurrencies, floor: options.floor).run()) }
if options.runs("dpop") { finish(try await DPoPSignInBenchmark(seconds: options.seconds).run()) }
if options.runs("agent") { finish(try await AgentBenchmark(seconds: options.seconds).run()) }
if options.runs("ssh") { finish(try await SSHBenchmark(seconds: options.seconds).run()) }
if options.runs("fleet") { finish(try await FleetBenchmark(seconds: options.seconds).run()) }
if options.runs("host") { finish(try await HostBenchmark(seconds: options.seconds).run()) }
if options.runs("package") { finish(try await PackageBenchmark(seconds: options.seconds).run()) }
if options.runs("attack") { finish(try await AttackBenchmark().run()) }
if options.runs("agents") { finish(try await AgentClientBenchmark(seconds: options.seconds).run()) }
if options.runs("peer") { finish(try await PeerProviderBenchmark(seconds: options.seconds).run()) }
if options.runs("go-peer") { finish(try await GoPeerBenchmark(seconds: options.seconds, concurrencies: options.clients.map { [$0] } ?? [1, 16, 64], floor: options.floor).run()) }
if options.runs("store") { finish(try await PersistedProviderBenchmark(seconds: options.seconds, sizes: options.sizes ?? [0, 10_000, 100_000, 1_000_000], concurrencies: options.clients.map { [$0] } ?? [1, 16, 64], creations: options.creations, floor: options.floor).run()) }
Report.targets(of: reports).print(markdown: options.markdown)
