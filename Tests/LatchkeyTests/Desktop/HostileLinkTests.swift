import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// Links a stranger could put in an e-mail or a web page, handed to `latchkey open` as the
/// desktop would hand them (docs/SECURITY.md, "Links on a Linux desktop"): each is refused
/// or shown escaped, and nothing reaches any provider. The allowed provider, and a second
/// one that is not allowed, are ``SilentListener``s, which count every connection made.
@Suite("latchkey open: hostile links are refused before any request")
struct HostileLinkTests {
    struct Context: Sendable {
        let allowed: URL
        let other: URL
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        /// What stderr must say.
        let refusal: String
        let link: @Sendable (Context) -> String
        var testDescription: String { name }
    }

    static let links: [Case] = [
        Case(name: "terminal escapes (OSC title, CSI clear) in an identifier", refusal: "not a link Latchkey understands") {
            "latchkey://bind?api_base_url=\($0.allowed.absoluteString)&job_id=job\u{1B}]0;owned\u{07}\u{1B}[2J&token=t"
        },
        Case(name: "bidi override characters in an identifier", refusal: "not a link Latchkey understands") {
            "latchkey://bind?api_base_url=\($0.allowed.absoluteString)&job_id=abc\u{202E}gpj.exe\u{2066}&token=t"
        },
        Case(name: "a 64 KiB query", refusal: "over the 16384 a link may have") {
            "latchkey://bind?api_base_url=\($0.allowed.absoluteString)&job_id=j&token=" + String(repeating: "A", count: 64 * 1024)
        },
        Case(name: "a javascript: link", refusal: "links of scheme javascript are not Latchkey's") { _ in "javascript:alert(document.cookie)//latchkey://bind" },
        Case(name: "a file: link", refusal: "links of scheme file are not Latchkey's") { _ in "file:///etc/passwd" },
        Case(name: "a javascript: provider inside a latchkey link", refusal: "javascript") { _ in
            "latchkey://bind?api_base_url=javascript:alert(1)&job_id=j&token=t"
        },
        Case(name: "a file: provider inside a latchkey link", refusal: "file:///etc") { _ in "latchkey://device?api_base_url=file:///etc&user_code=BCDF-GHJK" },
        Case(name: "a scheme that is not registered", refusal: "links of scheme evil are not Latchkey's") {
            "evil://bind?api_base_url=\($0.allowed.absoluteString)&job_id=j&token=t"
        },
        Case(name: "an api_base_url outside the allowed providers", refusal: "is not an allowed provider") {
            "latchkey://bind?api_base_url=\($0.other.absoluteString)&job_id=j&token=t"
        },
        Case(name: "a device link to a provider that is not allowed", refusal: "is not an allowed provider") {
            "\($0.other.absoluteString)/device?user_code=BCDF-GHJK"
        },
        Case(name: "the allowed provider's port under another host name", refusal: "is not an allowed provider") {
            "latchkey://transfer?api_base_url=http://localhost:\($0.allowed.port ?? 0)&code=7KQ-4M2-X9A"
        },
        Case(name: "nested percent-encoding of the provider URL", refusal: "is not an absolute http(s) URL") {
            let twice = $0.allowed.absoluteString.replacingOccurrences(of: ":", with: "%253A").replacingOccurrences(of: "/", with: "%252F")
            return "latchkey://bind?api_base_url=\(twice)&job_id=j&token=t"
        },
        Case(name: "nested percent-encoding of an identifier", refusal: "not a link Latchkey understands") {
            "latchkey://bind?api_base_url=\($0.allowed.absoluteString)&job_id=%2561%252F..%252F&token=t"
        },
        Case(name: "a parameter given twice", refusal: "not a link Latchkey understands") {
            "latchkey://device?api_base_url=\($0.allowed.absoluteString)&user_code=BCDF-GHJK&api_base_url=\($0.other.absoluteString)"
        },
        Case(name: "user info hiding the real host", refusal: "is not an absolute http(s) URL") {
            "latchkey://bind?api_base_url=http://127.0.0.1:\($0.allowed.port ?? 0)@\($0.other.host ?? "")&job_id=j&token=t"
        },
        Case(name: "a control character in a user code", refusal: "not a link Latchkey understands") {
            "latchkey://device?api_base_url=\($0.allowed.absoluteString)&user_code=ABCD%0A%1B[2J"
        },
    ]

    @Test("refused, shown escaped, nothing requested", arguments: links)
    func refused(_ hostile: Case) async throws {
        let allowed = try SilentListener()
        let other = try SilentListener()
        let desktop = try DesktopSandbox()
        let link = hostile.link(Context(allowed: allowed.url, other: other.url))
        let run = try await desktop.latchkey(["open", link, "--allow-provider", allowed.url.absoluteString, "--yes", "--timeout", "2"])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(run.stderr.contains(hostile.refusal), "\(run.stderr.prefix(600))")
        // Nothing the link carried drives the terminal.
        let everything = run.stdout + run.stderr
        #expect(!everything.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value) })
        #expect(everything.utf8.count < 8 * 1024, "a refusal is a few lines, not the link")
        #expect(allowed.connectionsMade() == 0 && other.connectionsMade() == 0, "a request was made")
    }

    @Test("the control case: an allowed link does reach its provider (the listeners see connections)")
    func allowedLinkConnects() async throws {
        let allowed = try SilentListener()
        let desktop = try DesktopSandbox()
        let run = try await desktop.latchkey([
            "open", "latchkey://transfer?api_base_url=\(allowed.url.absoluteString)&code=7KQ-4M2-X9A", "--allow-provider", allowed.url.absoluteString, "--yes",
            "--timeout", "1",
        ])
        #expect(run.status == 1)
        #expect(allowed.connectionsMade() > 0, "\(run.stderr)")
    }

    @Test("allow-provider in links.conf is believed only from a file its owner alone may write")
    func linkConfiguration() async throws {
        let allowed = try SilentListener()
        let desktop = try DesktopSandbox()
        let folder = URL(fileURLWithPath: try #require(desktop.environment["XDG_CONFIG_HOME"])).appendingPathComponent("latchkey")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("links.conf")
        try Data("# providers\nallow-provider = \(allowed.url.absoluteString)\n".utf8).write(to: file)
        let link = "latchkey://transfer?api_base_url=\(allowed.url.absoluteString)&code=7KQ-4M2-X9A"

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        _ = try await desktop.latchkey(["open", link, "--yes", "--timeout", "1"])
        #expect(allowed.connectionsMade() > 0, "allow-provider from links.conf")

        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: file.path)
        let writable = try await desktop.latchkey(["open", link, "--yes", "--timeout", "1"])
        #expect(writable.status == 1 && writable.stderr.contains("may be written by others"), "\(writable.stderr)")
        #expect(allowed.connectionsMade() == 0)

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        try Data("allow-provider = \(allowed.url.absoluteString)\nallow-everything = yes\n".utf8).write(to: file)
        let unknown = try await desktop.latchkey(["open", link, "--yes", "--timeout", "1"])
        #expect(unknown.status == 1 && unknown.stderr.contains("unknown key"), "\(unknown.stderr)")
        #expect(allowed.connectionsMade() == 0)
    }

    @Test("links.conf reached through a symlink, or over 64 KiB, is refused and nothing is sent")
    func linkConfigurationShapes() async throws {
        let allowed = try SilentListener()
        let desktop = try DesktopSandbox()
        let folder = URL(fileURLWithPath: try #require(desktop.environment["XDG_CONFIG_HOME"])).appendingPathComponent("latchkey")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("links.conf")
        let elsewhere = desktop.scratch.url.appendingPathComponent("elsewhere.conf")
        try Data("allow-provider = \(allowed.url.absoluteString)\n".utf8).write(to: elsewhere)
        try FileManager.default.createSymbolicLink(at: file, withDestinationURL: elsewhere)
        let link = "latchkey://transfer?api_base_url=\(allowed.url.absoluteString)&code=7KQ-4M2-X9A"
        let linked = try await desktop.latchkey(["open", link, "--yes", "--timeout", "1"])
        #expect(linked.status == 1 && linked.stderr.contains("cannot open the link configuration"), "\(linked.stderr)")
        try FileManager.default.removeItem(at: file)
        try Data(("allow-provider = \(allowed.url.absoluteString)\n" + String(repeating: "# padding\n", count: 7_000)).utf8).write(to: file)
        let oversized = try await desktop.latchkey(["open", link, "--yes", "--timeout", "1"])
        #expect(oversized.status == 1 && oversized.stderr.contains("is over 65536 bytes"), "\(oversized.stderr)")
        #expect(allowed.connectionsMade() == 0)
    }

    @Test("a mimeapps.list over 1 MiB is left alone: the registration refuses to rewrite it")
    func oversizedMimeAppsList() throws {
        let desktop = try DesktopSandbox()
        var environment = desktop.environment
        environment["PATH"] = "/nonexistent"  // no xdg-mime: the list is written by Latchkey itself
        let registration = try DeepLinkRegistration(scheme: "acme", command: ["/bin/true"], environment: environment)
        let list = registration.mimeAppsFile
        try FileManager.default.createDirectory(at: list.deletingLastPathComponent(), withIntermediateDirectories: true)
        let huge = Data(repeating: UInt8(ascii: "#"), count: (1 << 20) + 1)
        try huge.write(to: list)
        #expect(throws: LatchkeyError.self) { try registration.install() }
        #expect(try Data(contentsOf: list) == huge)
    }

    @Test("every form of every kind is read, with its provider, and nothing else")
    func linkForms() throws {
        let forms: [(String, DeepLink.Kind, String)] = [
            ("https://id.example.com/v1/bind/job1?token=t1", .bind, "https://id.example.com"),
            ("latchkey://bind?api_base_url=https://id.example.com/tenant&job_id=job1&token=t1", .bind, "https://id.example.com/tenant"),
            ("https://id.example.com/v1/authenticate/s1", .authenticate, "https://id.example.com"),
            ("LATCHKEY://authenticate?api_base_url=https://id.example.com&session_id=s1", .authenticate, "https://id.example.com"),
            ("https://id.example.com/device?user_code=WDJB-MJHT", .deviceApproval, "https://id.example.com"),
            ("latchkey://device?api_base_url=https://id.example.com&user_code=WDJB-MJHT", .deviceApproval, "https://id.example.com"),
            ("latchkey://transfer?api_base_url=https://id.example.com&code=7KQ-4M2-X9A", .transfer, "https://id.example.com"),
        ]
        for (text, kind, provider) in forms {
            let link = try DeepLink.parse(text, schemes: ["latchkey"])
            #expect(link.kind == kind, "\(text)")
            #expect(link.provider.absoluteString == provider, "\(text)")
            #expect(link.isAllowed(by: [try #require(URL(string: "https://id.example.com"))]))
            #expect(!link.isAllowed(by: [try #require(URL(string: "https://example.com"))]))
            #expect(!link.isAllowed(by: [try #require(URL(string: "http://id.example.com"))]))
        }
        let tenant = try DeepLink.parse("latchkey://bind?api_base_url=https://id.example.com/tenant&job_id=j&token=t", schemes: ["latchkey"])
        #expect(!tenant.isAllowed(by: [try #require(URL(string: "https://id.example.com/ten"))]))
        #expect(tenant.isAllowed(by: [try #require(URL(string: "https://id.example.com/tenant/"))]))
        for text in [
            "https://id.example.com/device?user_code=WDJB-MJHT&x=1", "latchkey://device?api_base_url=http://id.example.com&user_code=WDJB-MJHT",
            "latchkey://transfer?api_base_url=https://id.example.com&code=7K", "latchkey://approve?api_base_url=https://id.example.com&user_code=WDJB-MJHT",
            "latchkey://bind?api_base_url=https://id.example.com&job_id=j&token=t#frag", "acme://bind?api_base_url=https://id.example.com&job_id=j&token=t",
        ] {
            #expect(throws: LatchkeyError.self, "\(text)") { try DeepLink.parse(text, schemes: ["latchkey"]) }
        }
        #expect(try DeepLink.parse("acme://bind?api_base_url=https://id.example.com&job_id=j&token=t", schemes: ["acme"]).kind == .bind)
    }

    @Test("a link cannot climb out of an allowed provider's path: dot segments, %2e%2e, %252F, backslashes and empty segments inside are refused before any request")
    func dotSegments() throws {
        let allowed = [try #require(URL(string: "http://127.0.0.1:8080/idp"))]
        for text in [
            "http://127.0.0.1:8080/idp/../device?user_code=WDJB-MJHT",
            "http://127.0.0.1:8080/idp/%2e%2e/device?user_code=WDJB-MJHT",
            "http://127.0.0.1:8080/idp/%2E%2E/other/v1/bind/job1?token=t1",
            "http://127.0.0.1:8080/idp/./../v1/authenticate/s1",
            "http://127.0.0.1:8080/idp/%252F..%252F/device?user_code=WDJB-MJHT",
            "http://127.0.0.1:8080/idp//x/../device?user_code=WDJB-MJHT",
            "latchkey://device?api_base_url=http://127.0.0.1:8080/idp/../other&user_code=WDJB-MJHT",
            "latchkey://bind?api_base_url=http://127.0.0.1:8080/idp/%2e%2e/other&job_id=j&token=t",
            "latchkey://transfer?api_base_url=http://127.0.0.1:8080/idp/%252F..%252Fother&code=7KQ-4M2-X9A",
            "latchkey://authenticate?api_base_url=http://127.0.0.1:8080/idp/..%5Cother&session_id=s1",
        ] {
            let link = try? DeepLink.parse(text, schemes: ["latchkey"])
            #expect(link == nil, "\(text) was read, as \(link?.provider.absoluteString ?? "-") allowed: \(link?.isAllowed(by: allowed) ?? false)")
        }
        // The honest forms under the allowed path still are.
        for text in [
            "http://127.0.0.1:8080/idp/device?user_code=WDJB-MJHT", "latchkey://bind?api_base_url=http://127.0.0.1:8080/idp/&job_id=j&token=t",
            "http://127.0.0.1:8080/idp/v1/bind/job1?token=t1",
        ] {
            #expect(try DeepLink.parse(text, schemes: ["latchkey"]).isAllowed(by: allowed), "\(text)")
        }
    }
}
