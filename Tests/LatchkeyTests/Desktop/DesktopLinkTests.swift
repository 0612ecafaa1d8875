import Foundation
import Latchkey
import LatchkeyOAuth
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// Links on a Linux desktop (docs/guides/desktop-links.md): `latchkey desktop
/// install` registers `latchkey open` with Debian's xdg-utils and desktop-file-utils, and
/// `xdg-open` of a `latchkey://` link then runs it in a (stand-in) terminal, which binds a
/// credential at a running `latchkey serve` or approves a device's sign-in there.
@Suite(
    "Links on a Linux desktop: latchkey desktop install, xdg-open, latchkey open",
    .requires(if: DesktopSandbox.available, "skipped: xdg-utils, desktop-file-utils, python3 or setsid is missing (.ci/run installs them)")
)
struct DesktopLinkTests {
    /// `latchkey://bind?api_base_url=…&job_id=…&token=…` for the provider's own bind URL.
    static func deepLink(forBindURL text: String, issuer: URL) throws -> String {
        let url = try #require(URLComponents(string: text))
        let token = try #require(url.queryItems?.first { $0.name == "token" }?.value)
        var link = URLComponents()
        link.scheme = "latchkey"
        link.host = "bind"
        link.queryItems = [
            .init(name: "api_base_url", value: issuer.absoluteString), .init(name: "job_id", value: String(url.path.split(separator: "/").last ?? "")),
            .init(name: "token", value: token),
        ]
        return try #require(link.string)
    }

    @Test("desktop install, then xdg-open of a latchkey:// bind link binds a credential at latchkey serve, and of a device link approves that device's sign-in")
    func xdgOpenBindsAndApproves() async throws {
        let (server, issuer) = try await CommandLineTests.serve()
        defer { CommandLineTests.stop(server) }
        let desktop = try DesktopSandbox()

        let installed = try await desktop.latchkey(["desktop", "install", "--allow-provider", issuer.absoluteString])
        #expect(installed.status == 0, "\(installed.stderr)")
        #expect(installed.stdout.contains("xdg-mime default"), "\(installed.stdout)")
        #expect(try await desktop.handler("latchkey") == "latchkey-latchkey.desktop")

        // A bind link, as an e-mail would carry it.
        let created = try await LatchkeyCommand.run(
            ["admin", "create-identity", "--idp", issuer.absoluteString, "--username", "ada", "--json"], environment: ["LATCHKEY_ADMIN_TOKEN": CommandLineTests.adminToken]
        )
        #expect(created.status == 0, "\(created.stderr)")
        let bindURL = try #require(try CommandLineTests.object(created.stdout)["bindURL"]?.stringValue)
        let opened = try await desktop.tool(["xdg-open", try Self.deepLink(forBindURL: bindURL, issuer: issuer)])
        let shown = desktop.shown()
        #expect(opened.status == 0, "xdg-open: \(opened.stderr) \(opened.stdout); the terminal showed: \(shown)")
        #expect(shown.contains("add a new passkey credential") && shown.contains("ada") && shown.contains(issuer.absoluteString), "\(shown)")
        #expect(shown.contains("Bound credential"), "\(shown)")

        // Bound at the provider: the vault signs in there.
        let signedIn = try await desktop.latchkey(["authenticate", "--issuer", issuer.absoluteString, "--json"])
        #expect(signedIn.status == 0, "\(signedIn.stderr)")

        // A device's sign-in, approved from a link.
        let started = try await HTTPExchange.form(
            issuer.appendingPathComponent(ProtocolPath.deviceAuthorization), DeviceAuthorizationRequest(clientID: "latchkey-cli", scope: "openid profile").formItems
        )
        try #require(started.status == 200)
        let device = try JSONDecoder().decode(DeviceAuthorizationResponse.self, from: started.body)
        var link = URLComponents()
        link.scheme = "latchkey"
        link.host = "device"
        link.queryItems = [.init(name: "api_base_url", value: issuer.absoluteString), .init(name: "user_code", value: device.userCode)]
        let approved = try await desktop.tool(["xdg-open", try #require(link.string)])
        let shownNow = desktop.shown()
        #expect(approved.status == 0, "xdg-open: \(approved.stderr); the terminal showed: \(shownNow)")
        #expect(shownNow.contains("Device sign-in \(device.userCode)") && shownNow.contains("Approved"), "\(shownNow)")
        let token = try await HTTPExchange.form(
            issuer.appendingPathComponent(ProtocolPath.token), TokenRequest(grantType: .deviceCode, clientID: "latchkey-cli", deviceCode: device.deviceCode).formItems
        )
        #expect(token.status == 200, "the device's poll after the approval: \(String(decoding: token.body, as: UTF8.self))")
    }

    @Test("declining at the prompt binds nothing and leaves the link unused")
    func decliningBindsNothing() async throws {
        let (server, issuer) = try await CommandLineTests.serve()
        defer { CommandLineTests.stop(server) }
        let desktop = try DesktopSandbox()
        try Data("n\n".utf8).write(to: desktop.answers)
        #expect(try await desktop.latchkey(["desktop", "install", "--allow-provider", issuer.absoluteString]).status == 0)
        let created = try await LatchkeyCommand.run(
            ["admin", "create-identity", "--idp", issuer.absoluteString, "--username", "bo", "--json"], environment: ["LATCHKEY_ADMIN_TOKEN": CommandLineTests.adminToken]
        )
        let bindURL = try #require(try CommandLineTests.object(created.stdout)["bindURL"]?.stringValue)
        let link = try Self.deepLink(forBindURL: bindURL, issuer: issuer)
        let opened = try await desktop.tool(["xdg-open", link])
        #expect(opened.status != 0)
        #expect(desktop.shown().contains("declined"), "\(desktop.shown())")
        let listed = try await desktop.latchkey(["list", "--json"])
        #expect(try CommandLineTests.object(listed.stdout)["credentials"]?.arrayValue?.isEmpty == true, "\(listed.stdout)")
        // The link still works once the person says yes.
        try Data("y\n".utf8).write(to: desktop.answers)
        #expect(try await desktop.tool(["xdg-open", link]).status == 0, "\(desktop.shown())")
    }

    @Test("desktop install is idempotent, leaves other schemes' handlers alone, refuses another application's scheme unless --force; uninstall takes only its own out")
    func installAndUninstall() async throws {
        let desktop = try DesktopSandbox()
        let config = try #require(desktop.environment["XDG_CONFIG_HOME"])
        let data = try #require(desktop.environment["XDG_DATA_HOME"])
        // Another application: the handler of another scheme, and a candidate for ours.
        let applications = URL(fileURLWithPath: data).appendingPathComponent("applications")
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        try Data("[Desktop Entry]\nType=Application\nName=Other\nExec=/bin/true %u\nMimeType=x-scheme-handler/other;x-scheme-handler/latchkey;\n".utf8)
            .write(to: applications.appendingPathComponent("other-app.desktop"))
        #expect(try await desktop.tool(["xdg-mime", "default", "other-app.desktop", "x-scheme-handler/other"]).status == 0)
        #expect(try await desktop.tool(["xdg-mime", "default", "other-app.desktop", "x-scheme-handler/latchkey"]).status == 0)

        let refused = try await desktop.latchkey(["desktop", "install"])
        #expect(refused.status == 1 && refused.stderr.contains("handled by other-app.desktop"), "\(refused.stderr)")
        #expect(try await desktop.handler("latchkey") == "other-app.desktop")
        #expect(!FileManager.default.fileExists(atPath: applications.appendingPathComponent("latchkey-latchkey.desktop").path))

        let forced = try await desktop.latchkey(["desktop", "install", "--force", "--json"])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(try CommandLineTests.object(forced.stdout)["changed"]?.boolValue == true)
        #expect(try await desktop.handler("latchkey") == "latchkey-latchkey.desktop")
        #expect(try await desktop.handler("other") == "other-app.desktop")
        let entry = try String(contentsOf: applications.appendingPathComponent("latchkey-latchkey.desktop"), encoding: .utf8)
        #expect(entry.contains("Exec=\(LatchkeyServe.binary.resolvingSymlinksInPath().path) open %u"), "\(entry)")
        for line in ["Terminal=true", "NoDisplay=true", "MimeType=x-scheme-handler/latchkey;"] { #expect(entry.contains(line), "\(entry)") }

        let again = try await desktop.latchkey(["desktop", "install", "--json"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try CommandLineTests.object(again.stdout)["changed"]?.boolValue == false, "\(again.stdout)")

        let uninstalled = try await desktop.latchkey(["desktop", "uninstall"])
        #expect(uninstalled.status == 0, "\(uninstalled.stderr)")
        #expect(!FileManager.default.fileExists(atPath: applications.appendingPathComponent("latchkey-latchkey.desktop").path))
        #expect(try await desktop.handler("other") == "other-app.desktop")
        let list = try String(contentsOf: URL(fileURLWithPath: config).appendingPathComponent("mimeapps.list"), encoding: .utf8)
        #expect(!list.contains("latchkey-latchkey.desktop") && list.contains("x-scheme-handler/other=other-app.desktop"), "\(list)")
        let twice = try await desktop.latchkey(["desktop", "uninstall"])
        #expect(twice.status == 0 && twice.stdout.contains("nothing changed"), "\(twice.stdout)")

        // A file at our path that is not ours is neither replaced nor deleted.
        let foreign = applications.appendingPathComponent("latchkey-latchkey.desktop")
        try Data("[Desktop Entry]\nType=Application\nName=Impostor\nExec=/bin/true\n".utf8).write(to: foreign)
        #expect(try await desktop.latchkey(["desktop", "uninstall"]).status == 1)
        #expect(try await desktop.latchkey(["desktop", "install", "--force"]).status == 1)
        #expect(try String(contentsOf: foreign, encoding: .utf8).contains("Impostor"))
    }

    @Test("DeepLinkRegistration: an application's own scheme and program; refused schemes and Exec arguments that would need quoting")
    func libraryRegistration() async throws {
        let desktop = try DesktopSandbox()
        let registration = try DeepLinkRegistration(
            scheme: "Acme-Login", command: ["/opt/acme/bin/acme", "--handle-link"], applicationName: "Acme", environment: desktop.environment
        )
        #expect(registration.scheme == "acme-login")
        #expect(registration.desktopFileID == "latchkey-acme-login.desktop")
        let outcome = try registration.install()
        #expect(outcome.changed)
        #expect(try registration.currentHandler() == "latchkey-acme-login.desktop")
        #expect(try await desktop.handler("acme-login") == "latchkey-acme-login.desktop")
        let entry = try String(contentsOf: registration.desktopEntryFile, encoding: .utf8)
        #expect(entry.contains("Exec=/opt/acme/bin/acme --handle-link %u") && entry.contains("Name=Acme"), "\(entry)")
        #expect(try registration.install().changed == false)
        #expect(try registration.uninstall().changed)
        #expect(try registration.currentHandler() == nil)

        for scheme in ["https", "file", "javascript", "1st", "a b", "", "acme\nlogin", String(repeating: "a", count: 65)] {
            #expect(throws: LatchkeyError.self, "scheme \(scheme.debugDescription)") {
                try DeepLinkRegistration(scheme: scheme, command: ["/bin/true"], environment: desktop.environment)
            }
        }
        for command in [["relative/acme"], ["/bin/acme", "two words"], ["/bin/acme", "$(id)"], ["/bin/acme", "100%"], ["/bin/acme", "a\nb"], ["/bin/acme", "\"q\""]] {
            let bad = try DeepLinkRegistration(scheme: "acme", command: command, environment: desktop.environment)
            #expect(throws: LatchkeyError.self, "\(command)") { try bad.install() }
            #expect(!FileManager.default.fileExists(atPath: bad.desktopEntryFile.path))
        }
    }
}
