import Foundation
import LatchkeyCrypto

/// The key vault: key creation next to the bare file-system cost of the same durable
/// write, signing through the vault next to a bare `SigningKey`, and `entries()` as the
/// vault grows.
struct VaultBenchmark {
    var seconds: Double

    func run() throws -> Report {
        let scratch = try makeScratchDirectory(under: NSTemporaryDirectory())
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let keyFile = scratch + "/vault.key"
        guard FileManager.default.createFile(atPath: keyFile, contents: try SecureRandom.bytes(count: 32), attributes: [.posixPermissions: 0o600]) else {
            throw BenchmarkError("cannot write \(keyFile)")
        }
        let vault = try KeyVault.open(at: URL(fileURLWithPath: scratch + "/vault"), key: .keyFile(URL(fileURLWithPath: keyFile)))

        // Creation is bound by fsync; measure a fixed time on the real temporary directory.
        let metadata = Data(repeating: 0x61, count: 200)
        let created = try measureThroughput(seconds: seconds / 2) { _ = try vault.createKey(.es256, metadata: metadata) }
        let recordSize = 1100
        let rawWrites = try measureThroughput(seconds: seconds / 2) { try durableWrite(bytes: recordSize, in: scratch) }

        // Signing: same message, interleaved rounds, averaged.
        let handle = try vault.createKey(.es256, metadata: metadata).handle
        let bare = try SigningKey.generate(.es256)
        let message = Data(repeating: 0x5A, count: 32)
        var throughVault = 0.0
        var direct = 0.0
        for _ in 0..<2 {
            throughVault += try measureThroughput(seconds: seconds / 2) { _ = try vault.sign(message, with: handle) } / 2
            direct += try measureThroughput(seconds: seconds / 2) { _ = try bare.signature(for: message) } / 2
        }

        var report = Report(title: "Key vault")
        report.lines = [
            ReportLine(name: "create ES256 key", latchkey: created, reference: rawWrites, referenceName: "bare write+fsync+rename+fsync of a \(recordSize)-byte file"),
            ReportLine(name: "sign through vault", latchkey: throughVault, reference: direct, referenceName: "bare SigningKey ES256 signature", target: .ratioAtLeast(0.8)),
        ]

        // Listing: built on /dev/shm when there is one, so building 10,000 records does not
        // take minutes of fsync; the listing itself reads from the page cache either way.
        let listingRoot = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        let listingScratch = try makeScratchDirectory(under: listingRoot)
        defer { try? FileManager.default.removeItem(atPath: listingScratch) }
        let listingVault = try KeyVault.open(at: URL(fileURLWithPath: listingScratch + "/vault"), key: .keyFile(URL(fileURLWithPath: keyFile)))
        var count = 0
        var timings: [(Int, Double)] = []
        for size in [1_000, 2_000, 5_000, 10_000] {
            while count < size {
                _ = try listingVault.createKey(count % 2 == 0 ? .es256 : .ed25519, metadata: metadata)
                count += 1
            }
            var best = Double.infinity
            for _ in 0..<3 {
                let start = ContinuousClock.now
                let entries = try listingVault.entries()
                let elapsed = ContinuousClock.now - start
                guard entries.count == size else { throw BenchmarkError("listed \(entries.count) of \(size) keys") }
                let (whole, fraction) = elapsed.components
                best = min(best, (Double(whole) + Double(fraction) / 1e18) * 1000)
            }
            timings.append((size, best))
        }
        report.notes = ["entries() (best of 3, on \(listingRoot)), in ms; each size next to 1,000 keys scaled up, so a ratio of 1 is linear growth"]
        let (baseSize, baseTime) = timings[0]
        for (size, time) in timings {
            report.lines.append(ReportLine(
                name: "list \(size) keys (ms)", latchkey: time, reference: baseTime * Double(size) / Double(baseSize),
                referenceName: "1000 keys' time x \(size / baseSize)", target: size == 10_000 ? .atMost(150) : nil
            ))
        }
        return report
    }

    /// The file-system part of a vault write, alone: temp file, write, fsync, rename,
    /// fsync of the directory.
    private func durableWrite(bytes: Int, in directory: String) throws {
        let temporary = directory + "/.bench-tmp"
        let target = directory + "/bench-target"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw BenchmarkError("cannot create \(temporary)") }
        let payload = [UInt8](repeating: 0x62, count: bytes)
        let written = payload.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        fsync(descriptor)
        close(descriptor)
        guard written == bytes, rename(temporary, target) == 0 else { throw BenchmarkError("durable write failed") }
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        fsync(directoryDescriptor)
        close(directoryDescriptor)
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
