import Foundation
@testable import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

/// Two `latchkey-vault-stress` processes write to one vault while the test SIGKILLs them
/// at random moments and restarts them; afterwards every write a child reported as
/// committed must be there, whole, and nothing may be torn.
@Suite("Key vault crash safety")
struct VaultCrashTests {
    /// The helper sits next to the test bundle in the build directory.
    static var helper: URL { ChildProcess.executable("latchkey-vault-stress") }

    static let requiredKills = 60

    /// One running child and the file its reports go to.
    final class Child {
        let process: SpawnedProcess
        let log: URL

        init(vault: URL, keyFile: URL, worker: Int, run: Int, logs: URL) throws {
            log = logs.appendingPathComponent("worker\(worker)-run\(run).log")
            try Data().write(to: log)
            let reports = try FileHandle(forWritingTo: log)
            defer { try? reports.close() }
            process = try SpawnedProcess(
                VaultCrashTests.helper, [vault.path, keyFile.path, String(worker)], stdout: .file(reports), stderr: .inherit
            )
        }

        /// Kills the child and waits for it off the cooperative pool (``Blocking``): the
        /// test kills sixty times, and each wait held one of the pool's two threads.
        func kill() async {
            process.send(SIGKILL)
            _ = await ChildProcess.waitForExit(process)
        }
    }

    @Test("SIGKILLed writers never lose a committed write or leave a torn record")
    func killWritersAtRandom() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.helper.path), "latchkey-vault-stress not found at \(Self.helper.path); it is built with the tests")
        let temporary = try TemporaryDirectory()
        let keyFile = try temporary.keyFile()
        let logs = temporary.url.appendingPathComponent("logs")
        try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: true)
        let before = try KeyVault.open(at: temporary.vault, key: .keyFile(keyFile))

        var slots: [Child?] = [nil, nil]
        var kills = 0
        var runs = 0
        var logFiles: [URL] = []
        while kills < Self.requiredKills {
            for worker in slots.indices where slots[worker] == nil {
                runs += 1
                let child = try Child(vault: temporary.vault, keyFile: keyFile, worker: worker, run: runs, logs: logs)
                logFiles.append(child.log)
                slots[worker] = child
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 20...160)))
            let victim = Int.random(in: 0..<slots.count)
            await slots[victim]?.kill()
            slots[victim] = nil
            kills += 1
        }
        for child in slots.compactMap({ $0 }) {
            await child.kill()
            kills += 1
        }

        // What the children reported as committed.
        var created: Set<String> = []
        var highestCounter: [String: Int] = [:]
        for log in logFiles {
            let text = try String(contentsOf: log, encoding: .utf8)
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ")
                // The last line may be cut by the kill mid-report: such a line is not a claim.
                if words.count == 2, words[0] == "created", words[1].count == 32 {
                    created.insert(String(words[1]))
                } else if words.count == 3, words[0] == "updated", let counter = Int(words[2]) {
                    highestCounter[String(words[1]), default: 0] = max(highestCounter[String(words[1]), default: 0], counter)
                }
            }
        }
        print("Vault crash test: \(kills) SIGKILLs over \(runs) runs of 2 concurrent writers; \(created.count) keys and \(highestCounter.values.reduce(0, +)) updates reported committed")
        #expect(kills >= Self.requiredKills)
        #expect(created.count >= 10, "the writers made too little progress to test anything")

        // First through the instance opened before the crashes, which has not cleaned up:
        // temporary files a killed writer left must not list as records or problems.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: temporary.vault.path + "/keys")
        let recordFiles = leftovers.filter { $0.hasSuffix(".json") }.count
        let beforeScan = try before.scan()
        #expect(beforeScan.problems.isEmpty && beforeScan.entries.count == recordFiles)
        print("Vault crash test: \(leftovers.count - recordFiles) temporary files left by killed writers, none listed")

        let vault = try KeyVault.open(at: temporary.vault, key: .keyFile(keyFile))
        let scan = try vault.scan()
        #expect(scan.problems.isEmpty, "torn or damaged records: \(scan.problems)")
        let entries = Dictionary(uniqueKeysWithValues: scan.entries.map { ($0.handle.rawValue, $0) })
        for handle in created {
            guard let entry = entries[handle] else {
                Issue.record("key \(handle) was reported created but is missing")
                continue
            }
            let signature = try vault.sign(Data("after the crash".utf8), with: entry.handle)
            #expect(entry.publicKey.isValidSignature(signature, for: Data("after the crash".utf8)), "key \(handle)")
        }
        for (handle, counter) in highestCounter {
            let words = entries[handle].map { String(decoding: $0.metadata, as: UTF8.self).split(separator: " ") }
            let stored = words.flatMap { $0.count == 4 ? Int($0[3]) : nil } ?? -1
            #expect(stored >= counter, "key \(handle): counter \(stored) below the committed \(counter)")
        }
        // Opening cleared any temporary file a killed writer left; every file in keys/ is a
        // record that listed.
        let names = try FileManager.default.contentsOfDirectory(atPath: temporary.vault.path + "/keys")
        #expect(names.allSatisfy { $0.hasSuffix(".json") }, "leftover files: \(names.filter { !$0.hasSuffix(".json") })")
        #expect(names.count == scan.entries.count)
    }
}
