import Foundation
import LatchkeyCrypto

/// Keys in the TPM next to software keys, in the same run (docs/PERFORMANCE.md, "TPM"):
/// key generation, a signature (load the wrapped blob, sign, flush), a signature through
/// the vault, and opening a TPM-sealed vault next to one opened with a key file. The TPM
/// is the one `TPM2OPENSSL_TCTI` names (scripts/performance-report.sh starts a swtpm);
/// without one the group says so and reports nothing. No targets: a software TPM is not
/// a hardware one, whose P-256 operations take tens of milliseconds each.
struct TPMBenchmark {
    var seconds: Double

    func run() throws -> Report {
        var report = Report(title: "TPM (tpm2 provider vs software keys, same run)")
        let tpm: TPM
        do {
            tpm = try TPM.system()
        } catch {
            report.notes = ["skipped: no TPM answers at \(TPM.configuredLocation) (set TPM2OPENSSL_TCTI; scripts/performance-report.sh starts a swtpm)"]
            return report
        }
        let scratch = try makeScratchDirectory(under: NSTemporaryDirectory())
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let keyFile = URL(fileURLWithPath: scratch + "/vault.key")
        guard FileManager.default.createFile(atPath: keyFile.path, contents: try SecureRandom.bytes(count: 32), attributes: [.posixPermissions: 0o600]) else {
            throw BenchmarkError("cannot write \(keyFile.path)")
        }
        let message = Data(repeating: 0x5A, count: 32)
        let software = try SigningKey.generate(.es256)
        let inTPM = try TPMSigningKey.generate(in: tpm)
        let vault = try KeyVault.open(at: URL(fileURLWithPath: scratch + "/vault"), key: .keyFile(keyFile))
        let softwareHandle = try vault.createKey(.es256, metadata: Data()).handle
        let tpmHandle = try vault.createKey(.es256, metadata: Data(), protection: .tpm).handle
        let sealedDirectory = URL(fileURLWithPath: scratch + "/sealed")
        _ = try KeyVault.open(at: sealedDirectory, key: .tpm)
        let plainDirectory = URL(fileURLWithPath: scratch + "/vault")

        let slow = max(1, seconds / 2)
        let fast = max(0.5, seconds / 4)
        let lines: [(String, Double, Double, String)] = [
            ("ES256 keygen", try rate(slow) { _ = try TPMSigningKey.generate(in: tpm) }, try measureThroughput(seconds: fast) { _ = try SigningKey.generate(.es256) }, "software keygen"),
            ("ES256 sign (load, sign, flush)", try rate(slow) { _ = try inTPM.signature(for: message) }, try measureThroughput(seconds: fast) { _ = try software.signature(for: message) }, "software sign"),
            ("sign through the vault", try rate(slow) { _ = try vault.sign(message, with: tpmHandle) }, try measureThroughput(seconds: fast) { _ = try vault.sign(message, with: softwareHandle) }, "vault, software key"),
            ("open a TPM-sealed vault", try rate(slow) { _ = try KeyVault.open(at: sealedDirectory, key: .tpm) }, try rate(fast) { _ = try KeyVault.open(at: plainDirectory, key: .keyFile(keyFile)) }, "vault opened with a key file"),
        ]
        let signature = lines[1].1
        report.notes = [
            "TPM at \(tpm.location); figures are operations per second",
            "one sign-in makes one signature with the credential's key: on this TPM \(String(format: "%.1f", 1000 / signature)) ms of TPM time per sign-in; a hardware TPM takes tens of milliseconds for the same (a primary-key derivation, a load and an ECDSA signature)",
        ]
        report.lines = lines.map { name, ours, reference, referenceName in
            ReportLine(name: name, latchkey: ours, reference: reference, referenceName: referenceName)
        }
        return report
    }

    /// Operations per second of a slow operation: one warm-up, then as many as fit in
    /// `seconds` (at least five).
    private func rate(_ seconds: Double, _ operation: () throws -> Void) throws -> Double {
        try operation()
        let clock = ContinuousClock()
        let start = clock.now
        var count = 0
        var elapsed = Duration.zero
        repeat {
            try operation()
            count += 1
            elapsed = clock.now - start
        } while elapsed < .milliseconds(Int64(seconds * 1000)) || count < 5
        let (whole, attoseconds) = elapsed.components
        return Double(count) / (Double(whole) + Double(attoseconds) / 1e18)
    }
}
