import Foundation
import LatchkeyOAuth
import Hummingbird
import Latchkey
import LatchkeyCrypto
import LatchkeyTestSupport
import Synchronization
import Testing

/// A careless host (docs/SECURITY.md, "The vault"): a passphrase file others can read, a
/// weak passphrase, damaged records, and a process asked to dump core while it holds the
/// vault key. The `latchkey` binary as a process.
extension HostileInputSuite {
    static let passphrase = "correct horse battery staple"

    static func cliEnvironment(_ vault: TemporaryVault, passphrase: String? = HostileInputSuite.passphrase) -> [String: String] {
        var environment = ["LATCHKEY_STORE": vault.directory.appendingPathComponent("cli").path]
        environment["LATCHKEY_PASSPHRASE"] = passphrase
        return environment
    }

    @Test("a passphrase file readable by group or others is refused, and nothing is created")
    func passphraseFileModes() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary.path), "latchkey is built with the tests")
        let vault = try TemporaryVault()
        defer { vault.cleanUp() }
        let file = vault.directory.appendingPathComponent("passphrase")
        try Data("correct horse battery staple\n".utf8).write(to: file)
        for mode in [0o644, 0o640, 0o604] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file.path)
            let run = try await CommandLineTests.latchkey(["list", "--passphrase-file", file.path], environment: Self.cliEnvironment(vault, passphrase: nil))
            #expect(run.status == 1 && run.stderr.contains("chmod 600"), "mode \(String(mode, radix: 8)): \(run.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: vault.directory.appendingPathComponent("cli/vault.json").path))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        let run = try await CommandLineTests.latchkey(["list", "--passphrase-file", file.path], environment: Self.cliEnvironment(vault, passphrase: nil))
        #expect(run.status == 0, "\(run.stderr)")
    }

    @Test("list reports damaged records on stderr by handle and exits 1; --ignore-damaged exits 0; --json has them in damaged")
    func damagedRecords() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary.path), "latchkey is built with the tests")
        let vault = try TemporaryVault()
        defer { vault.cleanUp() }
        let environment = Self.cliEnvironment(vault)
        try await Self.withHostileBindServer { base in
            for _ in 0..<2 {
                let bind = try await CommandLineTests.latchkey(["bind", "\(base.absoluteString)/v1/bind/job?token=t"], environment: environment)
                try #require(bind.status == 0, "\(bind.stderr)")
            }
        }
        let keys = vault.directory.appendingPathComponent("cli/keys")
        let records = try FileManager.default.contentsOfDirectory(atPath: keys.path).filter { $0.hasSuffix(".json") }.sorted()
        try #require(records.count == 2)
        let damaged = String(records[0].dropLast(5))
        let file = keys.appendingPathComponent(records[0])
        var bytes = try Data(contentsOf: file)
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: file)

        let list = try await CommandLineTests.latchkey(["list"], environment: environment)
        #expect(list.status == 1, "\(list.stdout) \(list.stderr)")
        #expect(list.stderr.contains(damaged), "stderr must name the damaged record: \(list.stderr)")
        #expect(list.stdout.split(separator: "\n").count == 1, "the sound credential is still listed: \(list.stdout)")
        let ignoring = try await CommandLineTests.latchkey(["list", "--ignore-damaged"], environment: environment)
        #expect(ignoring.status == 0 && ignoring.stderr.contains(damaged), "\(ignoring.stderr)")
        let json = try await CommandLineTests.latchkey(["list", "--json", "--ignore-damaged"], environment: environment)
        let object = try CommandLineTests.object(json.stdout)
        #expect((object["damaged"]?.arrayValue)?.compactMap { $0["handle"]?.stringValue } == [damaged], "\(json.stdout)")
        #expect((object["credentials"]?.arrayValue)?.count == 1)
    }

    @Test("a copy of the vault shows no user name, RP ID, issuer, credential ID, counter or time")
    func metadataAbsentFromCopy() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary.path), "latchkey is built with the tests")
        let vault = try TemporaryVault()
        defer { vault.cleanUp() }
        let environment = Self.cliEnvironment(vault)
        let seen = Mutex((issuer: "", credentialID: ""))
        try await Self.withHostileBindServer { base in
            let bind = try await CommandLineTests.latchkey(["bind", "\(base.absoluteString)/v1/bind/job?token=t", "--json"], environment: environment)
            try #require(bind.status == 0, "\(bind.stderr)")
            let id = try #require((try CommandLineTests.object(bind.stdout)["credential"])?["id"]?.stringValue)
            seen.withLock { $0 = (base.absoluteString, id) }
        }
        let (issuer, credentialID) = seen.withLock { $0 }
        let directory = vault.directory.appendingPathComponent("cli")
        let files = try #require(FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL })
        let needles = ["forged", "127.0.0.1", issuer, credentialID, "signCount", "createdAt", "lastUsed", "rpID", "issuer"]
        var checked = 0
        for file in files where (try? file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
            let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            checked += 1
            for needle in needles where !needle.isEmpty {
                #expect(!text.contains(needle), "\(file.lastPathComponent) shows \(needle) without the key")
            }
        }
        #expect(checked >= 2, "the vault's header and record were read")
        // Nor do the files' times date the vault or its use (a sign-in rewrites a record).
        for url in files + [directory] {
            let values = try url.resourceValues(forKeys: [.contentModificationDateKey])
            #expect(values.contentModificationDate == Date(timeIntervalSince1970: 0), "\(url.lastPathComponent) is dated \(String(describing: values.contentModificationDate))")
        }
    }

    @Test("latchkey asked to dump core while it holds the vault key writes no core file")
    func noCoreDump() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: CommandLineTests.binary.path), "latchkey is built with the tests")
        let prlimit = try #require(["/usr/bin/prlimit", "/bin/prlimit"].first { FileManager.default.isExecutableFile(atPath: $0) }, "prlimit (util-linux) is needed")
        let vault = try TemporaryVault()
        defer { vault.cleanUp() }
        let pattern = (try? String(contentsOfFile: "/proc/sys/kernel/core_pattern", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        // A provider that holds the bind request open, so the process is caught mid-flow,
        // vault open, key derived.
        let router = Router()
        router.get("v1/bind/job") { _, _ -> Response in
            try await Task.sleep(for: .seconds(4))
            return Response(status: .notFound)
        }
        try await LiveServer.run(router, label: "stalling-provider") { base in
            let workdir = vault.directory.appendingPathComponent("cwd")
            try FileManager.default.createDirectory(at: workdir, withIntermediateDirectories: true)
            @Sendable func dump(_ arguments: [String]) async throws -> (limits: String, cores: [String]) {
                let process = try SpawnedProcess(
                    URL(fileURLWithPath: prlimit), ["--core=unlimited:unlimited", "--"] + arguments,
                    environment: ProcessInfo.processInfo.environment.merging(Self.cliEnvironment(vault).merging(["SWIFT_BACKTRACE": "enable=no"]) { $1 }) { $1 },
                    workingDirectory: workdir
                )
                try await Task.sleep(for: .milliseconds(1500))
                let limits = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/limits", encoding: .utf8)) ?? ""
                process.send(SIGSEGV)
                _ = await ChildProcess.waitForExit(process)
                let cores = try FileManager.default.contentsOfDirectory(atPath: workdir.path).filter { $0.hasPrefix("core") }
                for core in cores { try? FileManager.default.removeItem(at: workdir.appendingPathComponent(core)) }
                return (limits, cores)
            }
            // The control: a process that does not protect itself dumps core here.
            let control = try await dump(["/bin/sleep", "30"])
            let latchkey = try await dump([CommandLineTests.binary.path, "bind", "\(base.absoluteString)/v1/bind/job?token=t"])
            let coreLimit = latchkey.limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }.map(String.init) ?? "?"
            #expect(coreLimit.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2) == ["0", "0"], "latchkey's core limit: \(coreLimit)")
            #expect(latchkey.cores.isEmpty, "latchkey wrote \(latchkey.cores)")
            if control.cores.isEmpty {
                print("core-dump test: this host writes no core file even for an unprotected process (core_pattern \(pattern)); the limit check above stands alone")
            }
        }
    }

    /// A `.pub` argument that never ends (`/dev/zero`, whose size reads 0) or is far too
    /// long: the command reads one byte past the longest line and stops there, before any
    /// request, instead of reading without end.
    @Test("admin ssh-host-certificate refuses a public key file that never ends or is too long, before any request")
    func endlessPublicKeyFile() async throws {
        let vault = try TemporaryVault()
        defer { vault.cleanUp() }
        let long = vault.directory.appendingPathComponent("long.pub")
        try Data(repeating: UInt8(ascii: "A"), count: 1 << 20).write(to: long)
        for file in ["/dev/zero", long.path] {
            let run = try await CommandLineTests.latchkey(
                ["admin", "ssh-host-certificate", "--idp", "http://127.0.0.1:9", "--host", "h.example", "--public-key", file],
                environment: ["LATCHKEY_ADMIN_TOKEN": "unused"]
            )
            #expect(run.status != 0 && run.stderr.contains("a .pub line of at most"), "\(file): \(run.stderr)")
        }
    }
}
