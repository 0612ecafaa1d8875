import Foundation
import Glibc
import LatchkeyHost
import LatchkeyProtocol
import LatchkeyTestSupport
import Synchronization
import Testing

extension HostNSSTests {
    /// The host daemon when things go wrong (docs/SECURITY.md, "A host's directory"): the
    /// provider away, the daemon killed or started twice, its cache cut short or edited,
    /// another user at its root-only socket.
    @Suite("latchkey host: offline, killed, started twice, its cache damaged", .serialized)
    struct HostFaultTests {
        /// A host of a fleet where alice (in ops, which may log in to hosts labelled web) has
        /// an account, its first sync done; the provider is stopped when this returns.
        static func syncedHost(_ arguments: [String] = []) async throws -> (HostFleet, SpawnedProcess, uid: Int64, gid: Int64) {
            let made = Mutex<(HostFleet, SpawnedProcess, Int64, Int64)?>(nil)
            try await ProviderHarness.run { provider in
                let host = try await HostFleet.enroll(provider)
                let alice = try await host.account(provider, "alice")
                let ops = try await HostFleet.group(provider, "ops", members: ["alice"], label: "web")
                let process = try await host.run(arguments)
                made.withLock { $0 = (host, process, alice.account.uid, ops.gid) }
            }
            let (host, process, uid, gid) = try #require(made.withLock { $0 })
            return (host, process, uid, gid)
        }

        @Test("with the provider stopped, alice still resolves from the cache, across a restart of the daemon too, until --offline-max-age; then her account is not served, her groups resolve without her, and the journal says why")
        func offline() async throws {
            try HostFleet.requireNSS()
            let (host, first, uid, gid) = try await Self.syncedHost()
            ChildProcess.stop(first)
            #expect(try await HostFleet.getent(["passwd", "alice"]).status == 2, "no daemon, no account")

            // The provider is gone: a daemon started now serves its cache.
            let daemon = try await host.run(["--offline-max-age", "6"], waitFor: "serving the cached directory")
            defer { ChildProcess.stop(daemon) }
            #expect(try await HostFleet.getent(["passwd", "alice"]).stdout.hasPrefix("alice:x:\(uid):"))
            #expect(try await HostFleet.id("alice").stdout.contains("\(gid)(ops)"))
            let synced = try await host.command(["sync", "--now", "--json"])
            #expect(synced.status != 0 && synced.stdout.contains("\"providerReachable\" : false"), "\(synced.stdout)")
            #expect(host.journal().contains("directory sync failed; answering from the cache"))

            // Past the limit: no account; ops still names its gid.
            #expect(try await HostFleet.eventually(15) { try await HostFleet.getent(["passwd", "alice"]).status == 2 })
            #expect(try await HostFleet.getent(["group", "ops"]).stdout == "ops:x:\(gid):\n")
            #expect(host.journal().contains("older than the offline limit"))
            let status = try await host.command(["status", "--json"])
            #expect(status.stdout.contains("\"servingAccounts\" : false") && status.stdout.contains("\"accountsServed\" : 0"), "\(status.stdout)")
        }

        @Test("with the daemon killed, a lookup fails at once rather than hang; a second daemon for the same state or the same socket is refused; another user cannot use the control socket but may look accounts up")
        func killedTwiceAndOthers() async throws {
            try HostFleet.requireNSS()
            let (host, daemon, _, _) = try await Self.syncedHost()
            defer { ChildProcess.stop(daemon) }

            let second = try await LatchkeyCommand.run(["host", "run", "--config", host.config.path])
            #expect(second.status != 0 && second.stderr.contains("another latchkey host run holds"), "\(second.stderr)")
            let elsewhere = try await LatchkeyCommand.run([
                "host", "run", "--config", host.config.path, "--state-dir", host.directory.url.appendingPathComponent("state-2").path,
            ])
            #expect(elsewhere.status != 0 && elsewhere.stderr.contains("already serves \(host.socket)"), "\(elsewhere.stderr)")

            // nobody looks alice up through NSS (the socket is for everyone) but is refused
            // at the control socket (root's alone).
            let python = "/usr/bin/python3"
            try #require(FileManager.default.isExecutableFile(atPath: python), "Debian's python3 runs the connection as nobody")
            let asNobody = ["--reuid=nobody", "--regid=nogroup", "--clear-groups"]
            let lookup = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/setpriv"), asNobody + ["/usr/bin/getent", "passwd", "alice"])
            #expect(lookup.status == 0 && lookup.stdout.hasPrefix("alice:"), "\(lookup)")
            let control = host.stateDirectory.appendingPathComponent("control.socket").path
            let connect = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/setpriv"), asNobody + [
                python, "-c", "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ntry:\n s.connect(sys.argv[1]); print('connected')\nexcept PermissionError: print('refused')", control,
            ])
            #expect(connect.stdout == "refused\n", "\(connect)")

            // nobody holding 300 connections to the lookup socket takes at most 32 of its
            // 256: root's lookups (sshd's) go on.
            let flood = Pipe()
            let flooding = try SpawnedProcess(URL(fileURLWithPath: "/usr/bin/setpriv"), asNobody + [
                python, "-c", "import socket,sys,time\nopen=[]\nfor i in range(300):\n s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); open.append(s)\nprint('open', flush=True)\ntime.sleep(4)",
                host.socket,
            ], stdout: .pipe(flood))
            let (line, said) = await ChildProcess.firstLine(of: flood) { $0.contains("open") }
            try #require(line != nil, "the flood did not start: \(said)")
            let during = try await HostFleet.getent(["passwd", "alice"])
            #expect(during.status == 0 && during.stdout.hasPrefix("alice:"), "\(during)")
            ChildProcess.stop(flooding)

            // Killed: the socket file stays, nothing answers on it; lookups end at once.
            kill(daemon.processIdentifier, SIGKILL)
            daemon.waitUntilExit()
            for _ in 0..<3 {
                let started = ContinuousClock.now
                let gone = try await HostFleet.getent(["passwd", "alice"])
                let took = ContinuousClock.now - started
                #expect(gone.status == 2 && took < .seconds(1), "a lookup with the daemon gone took \(took)")
            }
            let principals = try await host.command(["principals", "alice"])
            #expect(principals.status != 0 && principals.stdout.isEmpty, "no principal without the daemon")
        }

        @Test("a cache cut short or edited is refused at start with a journal line, nothing of it is served, and the next sync writes a good one")
        func damagedCache() async throws {
            try HostFleet.requireNSS()
            try await ProviderHarness.run { provider in
                let host = try await HostFleet.enroll(provider)
                _ = try await host.account(provider, "alice")
                _ = try await HostFleet.group(provider, "ops", members: ["alice"], label: "web")
                let first = try await host.run()
                ChildProcess.stop(first)
                let cache = host.stateDirectory.appendingPathComponent("directory.cache")
                let good = try Data(contentsOf: cache)
                // An edit that keeps the JSON good: another shell for alice (JSONEncoder writes `\/`).
                let edited = Data(String(decoding: good, as: UTF8.self).replacingOccurrences(of: "bash", with: "dash").utf8)
                try #require(edited != good)
                for damaged in [good.prefix(good.count / 2), edited] {
                    try damaged.write(to: cache)
                    let daemon = try await host.run(waitFor: "directory synced")
                    #expect(host.journal().contains("refused the cache; serving nothing until the next sync"))
                    #expect(try await HostFleet.getent(["passwd", "alice"]).stdout.hasSuffix(":/bin/bash\n"), "served from the sync, not the damaged cache")
                    ChildProcess.stop(daemon)
                    #expect(try Data(contentsOf: cache) != damaged, "the sync wrote a good cache")
                    try Data().write(to: host.log)
                }
            }
        }

        @Test("SIGKILLed twenty times while it syncs a changing directory, the daemon always comes back serving a cache it wrote whole, never a refused one, and ends on the provider's last directory")
        func killedDuringSyncs() async throws {
            try HostFleet.requireNSS()
            try await ProviderHarness.run { provider in
                let host = try await HostFleet.enroll(provider)
                // Enough accounts, with long GECOS fields, that writing the cache takes a while.
                let padding = String(repeating: "x", count: 200)
                var identities: [String] = []
                for index in 0..<200 {
                    let (identity, _) = try await provider.createIdentity("user\(index)")
                    let set = try await provider.admin.call(AdminAPI.setPOSIXAccount, identity, body: .init(home: host.homeBase.appendingPathComponent("user\(index)").path, gecos: "user \(index) \(padding)"))
                    try #require(set.status == 200)
                    identities.append(identity)
                }
                _ = try await HostFleet.group(provider, "ops", members: (0..<200).map { "user\($0)" }, label: "web")
                // How long a sync takes here: each kill falls at random within it.
                let measured = try await host.run(waitFor: "answering user and group lookups")
                let started = ContinuousClock.now
                _ = try await HostFleet.eventually(30, every: .milliseconds(2)) { host.journal().contains("directory synced") }
                let measuredWindow = max(ContinuousClock.now - started, .milliseconds(20))
                ChildProcess.stop(measured)
                // The first sync's time is only a guess at the later ones (a loaded machine
                // slows one and not the next): the window follows what the kills find, shorter
                // after a kill that came too late, longer after one inside a sync, so about
                // half of them fall inside one wherever the syncs' times settle.
                var window = measuredWindow
                var killedMidSync = 0
                for round in 0..<20 {
                    // A new directory version for the daemon to write.
                    let changed = try await provider.admin.call(
                        AdminAPI.setPOSIXAccount, identities[round], body: .init(gecos: "round \(round) \(padding)")
                    )
                    try #require(changed.status == 200)
                    let daemon = try await host.run(waitFor: "answering user and group lookups")
                    try await Task.sleep(for: window * Double.random(in: 0...1.2))
                    kill(daemon.processIdentifier, SIGKILL)
                    daemon.waitUntilExit()
                    if !host.journal().contains("directory synced") {
                        killedMidSync += 1
                        window = min(window * 1.25, measuredWindow * 2)
                    } else {
                        window = max(window * 0.6, .milliseconds(1))
                    }
                    #expect(!host.journal().contains("refused the cache"), "round \(round): \(host.journal())")
                }
                #expect(killedMidSync >= 5, "only \(killedMidSync) kills fell inside a sync (the first took \(measuredWindow), the window ended at \(window))")
                let daemon = try await host.run(waitFor: "directory")
                defer { ChildProcess.stop(daemon) }
                #expect(!host.journal().contains("refused the cache"))
                let last = try await HostFleet.eventually { try await HostFleet.getent(["passwd", "user19"]).stdout.contains(":round 19 ") }
                let shown = try await HostFleet.getent(["passwd", "user19"])
                #expect(last, "\(shown) \(host.journal())")
                #expect(try await HostFleet.getent(["group", "ops"]).stdout.split(separator: ",").count == 200)
            }
        }
    }
}
