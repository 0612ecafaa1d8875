import Foundation
import Latchkey
import LatchkeyIdP
import LatchkeyOAuth

/// Full sign-ins (`Embedded.authenticate`) with tokens bound to the credential's DPoP key
/// (RFC 9449) next to bearer sign-ins, against the in-process reference provider, in the
/// same run: the two alternate in short rounds, and the ratio is the median of the rounds'
/// paired ratios, so a slow or fast spell of a noisy machine (these VMs drift by 10% within
/// seconds; three long rounds put one client's ratio anywhere from 0.79x to 0.89x) moves one
/// pair, not the figure.
/// Over the challenge endpoint DPoP adds three proofs to each sign-in (the two challenge
/// requests and /token): an ES256 signature through the vault, a verification and a
/// replay-table insert each.
/// Also measured: `validTokens` answering from the vault's token cache, the path
/// `latchkey token` and `latchkey api` take within a token's lifetime.
struct DPoPSignInBenchmark {
    var seconds: Double
    static let concurrencies = [1, 4]
    static let rounds = 7

    func run() async throws -> Report {
        try await ProviderBenchmark.withProvider { issuer, scratch, root in
            let transport = HTTP1Transport()
            var bound: [ProviderBenchmark.Client] = []
            for index in 0..<(Self.concurrencies.max() ?? 1) {
                bound.append(try await .bound(issuer: issuer, directory: scratch.appendingPathComponent("client-\(index)"), transport: transport, name: "dpop-\(index)"))
            }
            let clients = bound
            guard let redirectURI = URL(string: "http://127.0.0.1/callback") else { throw BenchmarkError("redirect URI") }
            @Sendable func signIn(_ index: Int, _ proofOfPossession: ProofOfPossession) async throws {
                let tokens = try await clients[index].embedded.authenticate(
                    issuer: issuer, clientID: "latchkey-cli", redirectURI: redirectURI, proofOfPossession: proofOfPossession
                )
                guard tokens.claims != nil, (proofOfPossession == .dpop) == (tokens.dpop != nil) else { throw BenchmarkError("unexpected tokens") }
            }
            let timer = ProviderBenchmark(seconds: seconds / Double(Self.rounds))
            var report = Report(title: "DPoP: full sign-ins with DPoP-bound tokens vs bearer (Embedded.authenticate), and the token cache")
            report.notes = [
                "vaults on \(root); bearer and DPoP alternate in \(Self.rounds) rounds each; figures are medians of the rounds, ratios the median of the paired rounds' ratios; target: DPoP sign-ins/s >= 0.85x bearer at 1 client"
            ]
            for concurrency in Self.concurrencies {
                var bearer: [ProviderBenchmark.Figures] = []
                var dpop: [ProviderBenchmark.Figures] = []
                for _ in 0..<Self.rounds {
                    bearer.append(try await timer.measure(concurrency: concurrency) { try await signIn($0, ProofOfPossession.none) })
                    dpop.append(try await timer.measure(concurrency: concurrency) { try await signIn($0, .dpop) })
                }
                let ratios = zip(dpop, bearer).compactMap { $1.throughput > 0 ? $0.throughput / $1.throughput : nil }
                report.lines.append(ReportLine(
                    name: "\(concurrency) client(s): DPoP sign-ins/s", latchkey: median(dpop.map(\.throughput)), reference: median(bearer.map(\.throughput)),
                    referenceName: "bearer sign-ins/s", target: concurrency == 1 ? .ratioAtLeast(0.85) : nil,
                    pairedRatio: ratios.count == Self.rounds ? median(ratios) : 0
                ))
                report.lines.append(ReportLine(
                    name: "\(concurrency) client(s): errors", latchkey: Double(dpop.map(\.errors).reduce(0, +)), reference: nil,
                    referenceName: "bearer errors: \(bearer.map(\.errors).reduce(0, +))", target: .atMost(0)
                ))
            }
            // The cache: a kept, valid, DPoP-bound token handed out again.
            let cached = try await timer.measure(concurrency: 1) { _ in
                _ = try await clients[0].embedded.validTokens(issuer: issuer, clientID: "latchkey-cli", redirectURI: redirectURI, proofOfPossession: .dpop)
            }
            let full = try await timer.measure(concurrency: 1) { try await signIn($0, .dpop) }
            report.lines.append(ReportLine(name: "validTokens from the cache/s", latchkey: cached.throughput, reference: full.throughput, referenceName: "DPoP sign-ins/s"))
            return report
        }
    }
}
