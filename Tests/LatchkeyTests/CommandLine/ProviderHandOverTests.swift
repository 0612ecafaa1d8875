import Foundation
import LatchkeyTestSupport
import Testing

/// The host's `latchkey` (latchkey-without-provider, the Debian package's /usr/bin/latchkey)
/// carries none of the provider, and hands the commands that need it to the full binary
/// (issue 75, item 4; docs/guides/install.md, "Two packages"): the same command line, the
/// same process (execv), and only a binary no one else may write.
@Suite("The host's latchkey hands the provider's commands over")
struct ProviderHandOverTests {
    static let installedProvider = "/usr/libexec/latchkey/latchkey-provider"

    /// swift-corelibs-foundation (module `Foundation`, as against `FoundationEssentials`)
    /// brings ICU and its 32 MiB of data (`icudt…_dat`) with it: the client modules use
    /// FoundationEssentials only (docs/PERFORMANCE.md, "The Debian package").
    @Test("the host's binary links nothing of LatchkeyIdP, Hummingbird, PostgresNIO, Foundation's networking, corelibs Foundation or ICU")
    func noProviderInside() async throws {
        let nm = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/nm"), [LatchkeyCommand.binary.path])
        #expect(nm.status == 0, "\(nm.stderr)")
        for module in ["11LatchkeyIdP", "11Hummingbird", "11PostgresNIO", "20FoundationNetworking", "10Foundation", "24FoundationInternationalization"] {
            #expect(!nm.stdout.contains("$s\(module)"), "the host's latchkey holds symbols of \(module.drop { $0.isNumber })")
        }
        #expect(!nm.stdout.contains("icudt"), "the host's latchkey holds ICU's data")
        let full = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/nm"), [LatchkeyCommand.fullBinary.path])
        #expect(full.stdout.contains("$s11LatchkeyIdP"), "the full latchkey should hold the provider")
    }

    @Test("both binaries name the same release and commit; serve's options parse in the host's binary")
    func sameTree() async throws {
        let host = try await LatchkeyCommand.run(["--version"])
        let full = try await ChildProcess.run(LatchkeyCommand.fullBinary, ["--version"])
        #expect(host.status == 0 && full.status == 0)
        #expect(host.stdout == full.stdout)
        let help = try await LatchkeyCommand.run(["serve", "--help"])
        #expect(help.status == 0, "\(help.stderr)")
        #expect(help.stdout.contains("USAGE: latchkey serve"), "\(help.stdout)")
        #expect(help.stdout.contains("--data-dir"), "\(help.stdout)")
        let bad = try await LatchkeyCommand.run(["serve", "--no-such-option"])
        #expect(bad.status == 2, "a usage error is found before any hand-over: \(bad.stderr)")
    }

    @Test("demo and an offline admin events verify run in the full binary, handed over by the host's")
    func handsOver() async throws {
        let directory = try TemporaryDirectory()
        let demo = try await LatchkeyCommand.run(["demo", "--json", "--store", directory.url.appendingPathComponent("demo").path])
        #expect(demo.status == 0, "\(demo.stderr)")
        #expect(demo.stdout.contains("\"ok\":true"), "\(demo.stdout.prefix(500))")
        // A store read offline: only the provider's binary can open one, and its answer
        // about an empty directory (LatchkeyIdP's StoreError) shows it ran.
        let data = try directory.subdirectory("provider")
        let verify = try await LatchkeyCommand.run(["admin", "events", "verify", "--data-dir", data.path, "--json"])
        #expect(verify.status == 1)
        #expect(verify.stderr.contains("no Latchkey store in \(data.path)"), "\(verify.stderr)")
        // With --idp the host's binary answers itself: a provider that is not there.
        let remote = try await LatchkeyCommand.run(["admin", "events", "verify", "--idp", "http://127.0.0.1:9", "--admin-token-file", "/dev/null"])
        #expect(remote.status == 1)
        #expect(!remote.stderr.contains("StoreError"), "\(remote.stderr)")
    }

    @Test("a provider binary others may write, a link, or none at all, is refused with a clear error")
    func refusesUntrustedProvider() async throws {
        try #require(!FileManager.default.fileExists(atPath: Self.installedProvider), "the latchkey-provider package is installed here; its binary would be found first")
        let directory = try TemporaryDirectory()
        let host = directory.url.appendingPathComponent("latchkey-without-provider")
        // Copied by cp, a process of its own: a file this process had open for writing could
        // be inherited by a child another test starts meanwhile, and exec would then fail
        // with ETXTBSY.
        let copied = try await ChildProcess.run(URL(fileURLWithPath: "/bin/cp"), [LatchkeyCommand.binary.path, host.path])
        try #require(copied.status == 0, "\(copied.stderr)")
        let missing = try await ChildProcess.run(host, ["demo"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("install the latchkey-provider package"), "\(missing.stderr)")
        let impostor = directory.url.appendingPathComponent("latchkey")
        try Data("#!/bin/sh\necho impostor ran\n".utf8).write(to: impostor)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: impostor.path)
        let refused = try await ChildProcess.run(host, ["demo"])
        #expect(refused.status == 1)
        #expect(!refused.stdout.contains("impostor ran"), "a provider binary anyone may write was run")
        #expect(refused.stderr.contains("only root or you may write"), "\(refused.stderr)")
        // A link is not followed, even to the real binary.
        try FileManager.default.removeItem(at: impostor)
        try FileManager.default.createSymbolicLink(at: impostor, withDestinationURL: LatchkeyCommand.fullBinary)
        let linked = try await ChildProcess.run(host, ["demo"])
        #expect(linked.status == 1)
        #expect(linked.stderr.contains("cannot be opened"), "\(linked.stderr)")
    }
}
