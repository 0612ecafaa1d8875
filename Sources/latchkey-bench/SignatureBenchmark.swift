import Foundation
import LatchkeyCrypto

/// Key generation, signing and verification through `LatchkeyCrypto`, next to
/// `openssl speed` in the same run.
///
/// Latchkey's rounds and `openssl speed`'s runs alternate in pairs, and each ratio is the
/// median of the pairs' ratios, so a slow or fast spell of the machine (these VMs drift
/// by several percent within a minute) falls on both sides of a pair and outliers drop
/// out. The message is 20 bytes, as in `openssl speed`'s loop; Latchkey also hashes it
/// with SHA-256 (ES256), which `openssl speed` does not.
struct SignatureBenchmark {
    var seconds: Double
    static let pairs = 7

    func run() throws -> Report {
        let message = Data(repeating: 0x5A, count: 20)
        let es256 = try SigningKey.generate(.es256)
        let ed25519 = try SigningKey.generate(.ed25519)
        let es256Signature = try es256.signature(for: message)
        let ed25519Signature = try ed25519.signature(for: message)
        let es256Public = es256.publicKey
        let ed25519Public = ed25519.publicKey

        let roundSeconds = max(0.5, seconds / 2)
        func round(_ seconds: Double) throws -> [Double] {
            [
                try measureThroughput(seconds: seconds) { _ = try SigningKey.generate(.es256) },
                try measureThroughput(seconds: seconds) { _ = try es256.signature(for: message) },
                measureThroughput(seconds: seconds) { _ = es256Public.isValidSignature(es256Signature, for: message) },
                try measureThroughput(seconds: seconds) { _ = try SigningKey.generate(.ed25519) },
                try measureThroughput(seconds: seconds) { _ = try ed25519.signature(for: message) },
                measureThroughput(seconds: seconds) { _ = ed25519Public.isValidSignature(ed25519Signature, for: message) },
            ]
        }
        var ours: [[Double]] = []
        var references: [OpenSSLSpeed] = []
        for pair in 0..<Self.pairs {
            // Alternate which side goes first, so neither always runs on a warmer machine.
            if pair % 2 == 0 {
                ours.append(try round(roundSeconds))
                references.append(OpenSSLSpeed.measure(seconds: 1))
            } else {
                references.append(OpenSSLSpeed.measure(seconds: 1))
                ours.append(try round(roundSeconds))
            }
        }
        let figures = (0..<ours[0].count).map { index in median(ours.map { $0[index] }) }
        let speed = OpenSSLSpeed.median(references)
        /// The median over pairs of our figure `index` over the reference's figure.
        func pairedRatio(_ index: Int, _ reference: (OpenSSLSpeed) -> Double?) -> Double? {
            let ratios = zip(ours, references).compactMap { ours, speed in reference(speed).map { ours[index] / $0 } }
            return ratios.count == Self.pairs ? median(ratios) : nil
        }

        var report = Report(title: "Signatures (LatchkeyCrypto vs openssl speed, same run)")
        report.notes = [
            "\(Self.pairs) pairs of a Latchkey round (\(roundSeconds) s per operation) and an openssl speed -seconds 1 run; figures are medians, ratios the median of the pairs' ratios",
        ]
        report.lines = [
            ReportLine(name: "ES256 keygen", latchkey: figures[0], reference: nil, referenceName: "none", target: .atLeast(20_000)),
            ReportLine(name: "ES256 sign", latchkey: figures[1], reference: speed.ecdsaP256Sign, referenceName: "openssl speed ecdsap256", target: .ratioAtLeast(0.98), pairedRatio: pairedRatio(1, \.ecdsaP256Sign)),
            ReportLine(name: "ES256 verify", latchkey: figures[2], reference: speed.ecdsaP256Verify, referenceName: "openssl speed ecdsap256", target: .ratioAtLeast(0.98), pairedRatio: pairedRatio(2, \.ecdsaP256Verify)),
            ReportLine(name: "Ed25519 keygen", latchkey: figures[3], reference: nil, referenceName: "none"),
            ReportLine(name: "Ed25519 sign", latchkey: figures[4], reference: speed.ed25519Sign, referenceName: "openssl speed ed25519", pairedRatio: pairedRatio(4, \.ed25519Sign)),
            ReportLine(name: "Ed25519 verify", latchkey: figures[5], reference: speed.ed25519Verify, referenceName: "openssl speed ed25519", pairedRatio: pairedRatio(5, \.ed25519Verify)),
        ]
        return report
    }
}
