import Foundation
import LatchkeyCrypto

/// Key generation, signing and verification through `LatchkeyCrypto`, next to
/// `openssl speed` in the same run.
///
/// Latchkey's rounds and `openssl speed`'s runs alternate and each side's median is
/// taken, so drift in the machine's speed during the run affects both sides alike.
/// The message is 20 bytes, as in `openssl speed`'s loop; Latchkey also hashes it with
/// SHA-256 (ES256), which `openssl speed` does not.
struct SignatureBenchmark {
    var seconds: Double

    func run() throws -> Report {
        let message = Data(repeating: 0x5A, count: 20)
        let es256 = try SigningKey.generate(.es256)
        let ed25519 = try SigningKey.generate(.ed25519)
        let es256Signature = try es256.signature(for: message)
        let ed25519Signature = try ed25519.signature(for: message)
        let es256Public = es256.publicKey
        let ed25519Public = ed25519.publicKey

        // Interleaved: Latchkey, openssl, Latchkey, ..., Latchkey; each side's median, so a
        // slow or fast spell of the machine falls on both sides and outliers drop out.
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
        var ours: [[Double]] = [try round(roundSeconds)]
        var references: [OpenSSLSpeed] = []
        for _ in 0..<4 {
            references.append(OpenSSLSpeed.measure(seconds: 1))
            ours.append(try round(roundSeconds))
        }
        let figures = (0..<ours[0].count).map { index in median(ours.map { $0[index] }) }
        let speed = OpenSSLSpeed.median(references)

        var report = Report(title: "Signatures (LatchkeyCrypto vs openssl speed, same run)")
        report.notes = [
            "medians: 5 Latchkey rounds interleaved with 4 runs of openssl speed -seconds 1",
        ]
        report.lines = [
            ReportLine(name: "ES256 keygen", latchkey: figures[0], reference: nil, referenceName: "none", target: ">= 20000/s"),
            ReportLine(name: "ES256 sign", latchkey: figures[1], reference: speed.ecdsaP256Sign, referenceName: "openssl speed ecdsap256", target: ">= 0.95x"),
            ReportLine(name: "ES256 verify", latchkey: figures[2], reference: speed.ecdsaP256Verify, referenceName: "openssl speed ecdsap256", target: ">= 0.95x"),
            ReportLine(name: "Ed25519 keygen", latchkey: figures[3], reference: nil, referenceName: "none", target: "-"),
            ReportLine(name: "Ed25519 sign", latchkey: figures[4], reference: speed.ed25519Sign, referenceName: "openssl speed ed25519", target: "-"),
            ReportLine(name: "Ed25519 verify", latchkey: figures[5], reference: speed.ed25519Verify, referenceName: "openssl speed ed25519", target: "-"),
        ]
        return report
    }
}
