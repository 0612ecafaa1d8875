import Foundation
import Latchkey
import LatchkeyIdP
import LatchkeyOAuth

/// Full sign-ins (`Embedded.authenticate`) with tokens bound to the credential's DPoP key
/// (RFC 9449) next to bearer sign-ins, against the in-process reference provider, in the
/// same run: the two alternate in rounds so drift on a noisy machine hits both alike.
/// Over the challenge endpoint DPoP adds three proofs to each sign-in (the two challenge
/// requests and /token): an ES256 signature through the vault, a verification and a
/// replay-table insert each.
/// Also measured: `validTokens` answering from the vault's token cache, the path
/// `latchkey token` and `latchkey api` take within a token's lifetime.
struct DPoPSignInBenchmark {
    var seconds: Double
    static let concurrencies = [1, 4]
    static let rounds = 3

    func run() async throws -> Report {
        try await ProviderBenchmark.withProvider { issuer, scratch, root in
            let transport = URLSessionTransport()
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
            report.notes = ["vaults on \(root); bearer and DPoP alternate in \(Self.rounds) rounds each; target: DPoP sign-ins/s >= 0.85x bearer at 1 client"]
            for concurrency in Self.concurrencies {
                var bearer = (count: 0.0, errors: 0)
                var dpop = (count: 0.0, errors: 0)
                for _ in 0..<Self.rounds {
                    let plain = try await timer.measure(concurrency: concurrency) { try await signIn($0, ProofOfPossession.none) }
                    let bound = try await timer.measure(concurrency: concurrency) { try await signIn($0, .dpop) }
                    bearer = (bearer.count + plain.throughput, bearer.errors + plain.errors)
                    dpop = (dpop.count + bound.throughput, dpop.errors + bound.errors)
                }
                let rounds = Double(Self.rounds)
                report.lines.append(ReportLine(
                    name: "\(concurrency) client(s): DPoP sign-ins/s", latchkey: dpop.count / rounds, reference: bearer.count / rounds,
                    referenceName: "bearer sign-ins/s", target: concurrency == 1 ? .ratioAtLeast(0.85) : nil
                ))
                report.lines.append(ReportLine(
                    name: "\(concurrency) client(s): errors", latchkey: Double(dpop.errors), reference: nil, referenceName: "bearer errors: \(bearer.errors)", target: .atMost(0)
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
