import Foundation
import Glibc
import Hummingbird
import LatchkeyHost
import LatchkeyProtocol
import LatchkeyTestSupport
import Synchronization
import Testing

extension HostNSSTests {
    /// A provider that lies to the host about its people (docs/SECURITY.md, "A host's
    /// directory"): an in-process server that answers the host's client credentials and then
    /// a directory of its choosing. The daemon must serve only what a host may serve, say in
    /// the journal what it refused, keep the last good directory when an answer is too large,
    /// and answer lookups at once while an answer is slow.
    @Suite("latchkey host: a provider that lies to the host", .serialized)
    struct HostLyingProviderTests {
        /// What the liar answers at `/v1/hosts/directory`.
        enum Answer: Sendable {
            case page(HostDirectoryPage)
            /// 100 MiB of JSON-looking bytes.
            case huge
            /// Nothing for eight seconds (longer than the lookups it is measured against).
            case slow
        }

        final class Liar: Sendable {
            let answer: Mutex<Answer>
            init(_ answer: Answer) { self.answer = Mutex(answer) }
        }

        static func json(_ data: Data) -> Response {
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
        }

        /// Runs the liar; `body` gets its issuer URL.
        static func withLiar(_ liar: Liar, _ body: @escaping @Sendable (URL) async throws -> Void) async throws {
            let router = Router()
            router.get(".well-known/openid-configuration") { request, _ in
                let issuer = "http://\(request.head.authority ?? "127.0.0.1")"
                return json(Data("""
                    {"issuer": "\(issuer)", "authorization_endpoint": "\(issuer)/authorize", "token_endpoint": "\(issuer)/token",
                     "jwks_uri": "\(issuer)/jwks", "response_types_supported": ["code"], "subject_types_supported": ["public"],
                     "id_token_signing_alg_values_supported": ["ES256"], "token_endpoint_auth_methods_supported": ["private_key_jwt"],
                     "grant_types_supported": ["client_credentials"], "dpop_signing_alg_values_supported": ["ES256"]}
                    """.utf8))
            }
            router.post("token") { _, _ in
                json(Data(#"{"access_token": "liar-token", "token_type": "DPoP", "expires_in": 300, "scope": "host"}"#.utf8))
            }
            router.get(RouterPath(stringLiteral: ProtocolPath.hostDirectory)) { _, _ in
                switch liar.answer.withLock({ $0 }) {
                case .page(let page): return json(try JSONEncoder().encode(page))
                case .huge: return json(Data(repeating: UInt8(ascii: " "), count: 100 << 20))
                case .slow:
                    try await Task.sleep(for: .seconds(8))
                    return json(Data("{}".utf8))
                }
            }
            try await LiveServer.run(router, label: "lying-host-provider", body)
        }

        /// A host enrolled at `issuer` (no admin there: the liar takes any client).
        static func enroll(_ issuer: URL) async throws -> HostFleet {
            let directory = try TemporaryDirectory(reachableByOtherUsers: true)
            chmod(directory.url.path, 0o755)
            let service = "io.latchkey-test-\(UInt32.random(in: 0...UInt32.max))"
            let config = directory.url.appendingPathComponent("host.conf")
            let enrolled = try await LatchkeyCommand.run([
                "host", "enroll", "--issuer", issuer.absoluteString, "--client-id", "web-1", "--config", config.path,
                "--vault", directory.url.appendingPathComponent("vault").path, "--vault-key-file", directory.url.appendingPathComponent("vault.key").path,
                "--state-dir", directory.url.appendingPathComponent("state").path, "--userdb-service", service,
            ])
            try #require(enrolled.status == 0, "host enroll: \(enrolled.stderr)")
            return HostFleet(directory: directory, config: config, service: service, clientID: "web-1")
        }

        static func account(_ name: String, _ uid: Int64, home: String? = nil, shell: String = "/bin/bash", gecos: String = "") -> HostDirectoryPage.Account {
            HostDirectoryPage.Account(name: name, uid: uid, gid: uid, gecos: gecos, home: home ?? "/home/\(name)", shell: shell)
        }

        @Test("a uid 0, a uid in the system range, root, names with : newline or NUL, a relative home, a home outside /home, a shell not in /etc/shells, a bad GECOS, a group named like a system group or holding strangers: each refused with a journal line, the honest entries served")
        func hostileValues() async throws {
            try HostFleet.requireNSS()
            let page = HostDirectoryPage(version: "7", accounts: [
                Self.account("zero", 0),
                Self.account("lowly", 500),
                Self.account("root", 70001),
                Self.account("col:on", 70002),
                Self.account("new\nline", 70003),
                Self.account("nul\u{0}byte", 70004),
                Self.account("relhome", 70005, home: "home/relhome"),
                Self.account("etchome", 70006, home: "/etc/etchome"),
                Self.account("dotted", 70007, home: "/home/../etc"),
                Self.account("evilshell", 70008, shell: "/tmp/evil"),
                Self.account("gecos", 70009, gecos: "x:0:0"),
                Self.account("good", 70010, gecos: "Good Person"),
                Self.account("good", 70011),
            ], groups: [
                HostDirectoryPage.Group(name: "lowgroup", gid: 10, sudo: false, members: []),
                HostDirectoryPage.Group(name: "sudo", gid: 70100, sudo: true, members: ["good"]),
                HostDirectoryPage.Group(name: "team", gid: 70101, sudo: false, members: ["good", "stranger", "good"]),
                HostDirectoryPage.Group(name: "good", gid: 70102, sudo: false, members: []),
            ], next: nil)
            let liar = Liar(.page(page))
            try await Self.withLiar(liar) { issuer in
                let host = try await Self.enroll(issuer)
                let daemon = try await host.run()
                defer { ChildProcess.stop(daemon) }
                let journal = host.journal()
                for (name, says) in [
                    ("zero", "the ID is in Debian's system accounts"), ("lowly", "the ID is in Debian's system accounts"),
                    ("root", "the name is a system account's"), ("col:on", "not a POSIX name"), ("new\u{FFFD}line", "not a POSIX name"),
                    ("relhome", "home home/relhome is not an absolute path"), ("etchome", "home /etc/etchome is not an absolute path"),
                    ("dotted", "is not an absolute path"), ("evilshell", "shell /tmp/evil is not in /etc/shells"),
                    ("gecos", "GECOS holds :"),
                ] {
                    #expect(journal.contains("refused account \(name)") && journal.contains(says), "\(name): \(says)\n\(journal)")
                }
                #expect(journal.contains("refused account good (uid 70011): another entry of the directory has this name"))
                #expect(journal.contains("refused group sudo (gid 70100): the name is a system account's"))
                #expect(journal.contains("refused group good (gid 70102): another entry of the directory has this name"))
                #expect(journal.contains("refused group lowgroup (gid 10)"))
                #expect(journal.contains("group team (gid 70101): left out 2 members"))
                // What is served: good, its private group, and team with good alone.
                #expect(try await HostFleet.getent(["passwd", "good"]).stdout == "good:x:70010:70010:Good Person:/home/good:/bin/bash\n")
                #expect(try await HostFleet.getent(["group", "team"]).stdout == "team:x:70101:good\n")
                for uid in ["0", "500"] {
                    #expect(!(try await HostFleet.getent(["passwd", uid]).stdout.contains("/home/")), "uid \(uid) stays the host's own")
                }
                for name in ["root", "zero", "lowly", "evilshell", "etchome"] {
                    #expect(try UserDatabaseClient.account(named: name, socket: host.socket) == nil, "\(name)")
                }
                let status = try await host.command(["status", "--json"])
                #expect(status.stdout.contains("\"refused\" : 16"), "\(status.stdout)")

                // Pages out of the protocol's order (two accounts with one uid among them) are
                // refused whole; the last good directory stays.
                liar.answer.withLock { $0 = .page(HostDirectoryPage(version: "8", accounts: [Self.account("late", 70030), Self.account("twin", 70030)], groups: [], next: nil)) }
                let synced = try await host.command(["sync", "--now"])
                #expect(synced.status != 0 && host.journal().contains("the directory's accounts are out of order"))
                #expect(try await HostFleet.getent(["passwd", "good"]).status == 0)
                #expect(try await HostFleet.getent(["passwd", "late"]).status == 2)
            }
        }

        @Test("an answer of 100 MiB is refused and the last good directory stays served; while an answer is slow, lookups are answered at once from memory")
        func hugeAndSlow() async throws {
            try HostFleet.requireNSS()
            let liar = Liar(.page(HostDirectoryPage(version: "1", accounts: [Self.account("steady", 70020)], groups: [], next: nil)))
            try await Self.withLiar(liar) { issuer in
                let host = try await Self.enroll(issuer)
                let daemon = try await host.run()
                defer { ChildProcess.stop(daemon) }
                #expect(try await HostFleet.getent(["passwd", "steady"]).status == 0)

                liar.answer.withLock { $0 = .huge }
                let synced = try await host.command(["sync", "--now", "--json"])
                #expect(synced.status != 0 && synced.stdout.contains("exceeds"), "\(synced.stdout) \(synced.stderr)")
                #expect(try await HostFleet.getent(["passwd", "steady"]).status == 0, "the last good directory is still served")

                liar.answer.withLock { $0 = .slow }
                // The next sync (interval 1 s) now waits on the liar; lookups must not.
                try await Task.sleep(for: .seconds(2))
                for _ in 0..<5 {
                    let started = ContinuousClock.now
                    let lookup = try await HostFleet.getent(["passwd", "steady"])
                    let took = ContinuousClock.now - started
                    #expect(lookup.status == 0 && took < .seconds(1), "a lookup took \(took) while a sync waited on a slow provider")
                }
                // SIGTERM while a sync waits on the liar: the daemon cancels it, ends at once
                // and removes its socket.
                let asked = ContinuousClock.now
                kill(daemon.processIdentifier, SIGTERM)
                let ended = try await HostFleet.eventually(5, every: .milliseconds(20)) { !daemon.isRunning }
                #expect(ended && ContinuousClock.now - asked < .seconds(3), "the daemon took \(ContinuousClock.now - asked) to stop")
                #expect(!FileManager.default.fileExists(atPath: host.socket))
            }
        }
    }
}
