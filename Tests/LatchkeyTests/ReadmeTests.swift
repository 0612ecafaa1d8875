import Foundation
import LatchkeyTestSupport
import Testing

/// The README and the guides stay true: the library example is the file the build
/// compiles, the README names the two commands a newcomer runs and stays short, and the
/// units the guides show are the ones in contrib/.
@Suite("README")
struct ReadmeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `docs/guides/NAME`.
    static func guide(_ name: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent("docs/guides/" + name), encoding: .utf8)
    }

    @Test("the README is under 400 lines and links every guide, each of which exists")
    func shortAndLinked() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.split(separator: "\n", omittingEmptySubsequences: false).count < 400)
        let guides = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("docs/guides").path).filter { $0.hasSuffix(".md") }
        #expect(guides.count >= 9)
        for name in guides {
            #expect(readme.contains("(docs/guides/\(name))"), "the README links \(name)")
            #expect(try Self.guide(name).contains("(../../README.md)"), "\(name) links back")
        }
    }

    @Test("the library example in README.md is Examples/ReadmeExample/main.swift, verbatim")
    func exampleIsCompiled() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let example = try String(contentsOf: Self.root.appendingPathComponent("Examples/ReadmeExample/main.swift"), encoding: .utf8)
        let block = "```swift\n" + example.trimmingCharacters(in: .newlines) + "\n```"
        #expect(readme.contains(block))
    }

    @Test("the two commands come first")
    func twoCommands() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "## Two commands"))
        let rest = readme[section.upperBound...]
        let firstBlock = try #require(rest.range(of: "```sh\n")).upperBound
        let end = try #require(rest[firstBlock...].range(of: "```")).lowerBound
        let commands = rest[firstBlock..<end].split(separator: "\n").map { $0.split(separator: "#").first?.trimmingCharacters(in: .whitespaces) }
        #expect(commands == ["swift run latchkey demo", "swift test"])
    }

    @Test("the agent's systemd user units in contrib/ are the ones its guide shows: socket 0600 in the runtime directory, a service that starts locked")
    func agentUnits() throws {
        let readme = try Self.guide("agent.md")
        let socket = try String(contentsOf: Self.root.appendingPathComponent("contrib/latchkey-agent.socket"), encoding: .utf8)
        let service = try String(contentsOf: Self.root.appendingPathComponent("contrib/latchkey-agent.service"), encoding: .utf8)
        #expect(readme.contains("```ini\n" + socket + "```") && readme.contains("```ini\n" + service + "```"))
        #expect(socket.contains("ListenStream=%t/latchkey/agent.sock") && socket.contains("SocketMode=0600"))
        #expect(service.contains("latchkey agent --locked") && service.contains("LimitCORE=0") && !service.contains("PASSPHRASE"))
    }

    @Test("the provider's systemd unit in contrib/ is the one its guide shows, with its hardening and no secret on the command line")
    func systemdUnit() throws {
        let readme = try Self.guide("provider.md")
        let unit = try String(contentsOf: Self.root.appendingPathComponent("contrib/latchkey-serve.service"), encoding: .utf8)
        #expect(readme.contains("```ini\n" + unit + "```"))
        for directive in ["DynamicUser=yes", "StateDirectory=latchkey/provider", "ProtectSystem=strict", "NoNewPrivileges=yes",
                          "EnvironmentFile=/etc/default/latchkey-serve", "LoadCredential=latchkey-admin-token:", "LoadCredential=latchkey-store-key:",
                          "latchkey-database-password"] {
            #expect(unit.contains(directive), "\(directive)")
        }
        #expect(!unit.contains("--admin-token ") && !unit.contains("password=") && !unit.contains("LATCHKEY_ADMIN_TOKEN="))
    }

    @Test("the TPM sign-in unit in contrib/ is the one its guide shows: no secret, the TPM device only")
    func tpmUnit() throws {
        let readme = try Self.guide("tpm.md")
        let unit = try String(contentsOf: Self.root.appendingPathComponent("contrib/sign-in-agent-tpm.service"), encoding: .utf8)
        #expect(readme.contains("```ini\n" + unit + "```"))
        for directive in ["LATCHKEY_VAULT_KEY=tpm", "DynamicUser=yes", "DevicePolicy=closed", "DeviceAllow=/dev/tpmrm0 rw", "SupplementaryGroups=tss"] {
            #expect(unit.contains(directive), "\(directive)")
        }
        #expect(!unit.contains("PASSPHRASE") && !unit.contains("Credential"))
    }

    @Test(
        "systemd-analyze verifies the units", .requires(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze"), "systemd-analyze not found: skipped"),
        arguments: ["latchkey-serve.service", "sign-in-agent-tpm.service", "latchkey-host.service", "latchkey-agent.service", "latchkey-agent.socket"]
    )
    func systemdUnitVerifies(_ name: String) async throws {
        let directory = try TemporaryDirectory()
        // The units name /usr/bin/latchkey, where the Debian package puts it; point them at
        // the one the tests built, and the provider's options file at a copy. Every unit is
        // copied, so one that requires another (the agent's service its socket) finds it.
        // Their man pages exist once the package is installed (scripts/check-deb.sh verifies
        // the installed units, pages and all), so the copies name none.
        let options = directory.url.appendingPathComponent("latchkey-serve.default")
        try Data(contentsOf: Self.root.appendingPathComponent("contrib/latchkey-serve.default")).write(to: options)
        let contrib = Self.root.appendingPathComponent("contrib")
        for unit in try FileManager.default.contentsOfDirectory(atPath: contrib.path) where !unit.hasSuffix(".default") {
            try String(contentsOf: contrib.appendingPathComponent(unit), encoding: .utf8)
                .replacingOccurrences(of: "/usr/bin/latchkey", with: LatchkeyServe.binary.path)
                .replacingOccurrences(of: "/etc/default/latchkey-serve", with: options.path)
                .replacing(#/man:latchkey[.a-z-]*\(1\) /#, with: "")
                .write(to: directory.url.appendingPathComponent(unit), atomically: true, encoding: .utf8)
        }
        let copy = directory.url.appendingPathComponent(name)
        let run = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/systemd-analyze"), ["verify", copy.path])
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
    }
}
