#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Dispatch
import Glibc
import Latchkey
import LatchkeyCrypto
import LatchkeyOAuth
import LatchkeyProtocol
import Logging
import Synchronization

/// `latchkey host run`: one per host, as root (docs/ARCHITECTURE.md, "A host's
/// directory"). It reads the provider's directory every ``Configuration/interval``, keeps
/// it in a crash-safe cache (``HostDirectoryCache``), and answers systemd's User/Group
/// Record Lookup API on `/run/systemd/userdb/<service>` from memory (``UserDatabaseService``),
/// so every program's NSS lookups see the directory's accounts and groups through
/// nss-systemd, with no code of ours loaded into them. When the provider cannot be
/// reached it goes on answering from the cache for ``Configuration/offlineMaxAge``.
public final class HostDaemon: Sendable {
    let configuration: Configuration
    private let cache: HostDirectoryCache
    private let alarm = Alarm()
    private let state: Mutex<State>
    /// Control-socket callers waiting for a sync: each for the first one that starts after
    /// it asked (a sync already under way may have read the provider before the change the
    /// caller wants to see), by the number of syncs started when it asked.
    private let waiters = Mutex<[(after: Int, done: DispatchSemaphore)]>([])
    /// For the provider's public SSH files: no token, the transport's size cap.
    private let sshTransport = HTTP1Transport()

    struct State {
        var snapshot: HostDirectoryCache.Snapshot?
        var confirmation: HostDirectoryCache.Confirmation?
        var local = LocalAccounts()
        var index = HostDirectoryIndex.empty
        var refused = 0
        var lastAttempt: Date?
        var lastError: String?
        var providerReachable = false
        var failures = 0
        /// When the local files and the offline limit are next looked at.
        var nextCheck = ContinuousClock.now
        var stopping = false
        var servers: [VarlinkServer] = []
        var sync: Task<Void, Never>?
        /// How many syncs have started.
        var syncsStarted = 0
        var key: SymmetricKey?
        var lock: Int32 = -1
    }

    public init(configuration: Configuration) {
        self.configuration = configuration
        cache = HostDirectoryCache(folder: configuration.stateDirectory)
        state = Mutex(State())
    }

    deinit {
        state.withLock { if $0.lock >= 0 { close($0.lock) } }
    }

    private var logger: Logger { configuration.logger }

    // MARK: Running

    /// Takes the state folder (refusing when another daemon holds it), loads the cache,
    /// starts answering lookups, and syncs until ``stop()``.
    public func run() async throws {
        try start()
        defer { shutDown() }
        while !state.withLock({ $0.stopping }) {
            // A sync is its own task, so that stop() can cancel one that waits on a slow
            // provider (each request has the transport's 30 s besides).
            let sync = Task { await syncOnce() }
            state.withLock { $0.sync = sync }
            await sync.value
            state.withLock { $0.sync = nil }
            guard !state.withLock({ $0.stopping }) else { break }
            let delay = nextDelay()
            await alarm.wait(for: .milliseconds(Int64(delay * 1000)))
        }
    }

    /// Ends ``run()``: cancels the sync under way, or ends the wait, and stops answering.
    public func stop() {
        let sync = state.withLock { state in
            state.stopping = true
            return state.sync
        }
        sync?.cancel()
        alarm.ring()
    }

    /// The lock, the cache, and both sockets; everything that can refuse to start.
    func start() throws {
        let folder = configuration.stateDirectory.path
        try HostFiles.prepareFolder(folder, mode: 0o755)
        let lock = open(folder + "/lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw HostError(.system, "cannot open \(folder)/lock: \(String(cString: strerror(errno)))") }
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            close(lock)
            throw HostError(.alreadyRunning, "another latchkey host run holds \(folder); one daemon a host")
        }
        state.withLock { $0.lock = lock }
        let key = try cache.key()
        var snapshot: HostDirectoryCache.Snapshot?
        var confirmation: HostDirectoryCache.Confirmation?
        do {
            snapshot = try cache.readSnapshot(key: key)
            confirmation = try cache.readConfirmation(key: key)
        } catch {
            logger.error("refused the cache; serving nothing until the next sync", metadata: ["error": .string(String(describing: error))])
            snapshot = nil
            confirmation = nil
        }
        // A confirmation of another version than the cached one says nothing of it.
        if confirmation?.version != snapshot?.directory.version { confirmation = nil }
        let local = LocalAccounts.read(passwd: configuration.passwdFile, group: configuration.groupFile)
        state.withLock { state in
            state.key = key
            state.snapshot = snapshot
            state.confirmation = confirmation
            state.local = local
        }
        rebuildIndex(reason: "cache loaded")
        if let snapshot {
            logger.info("serving the cached directory", metadata: ["version": .string(snapshot.directory.version), "accounts": .stringConvertible(snapshot.directory.accounts.count)])
        }
        try HostFiles.prepareFolder(configuration.userDatabaseDirectory, mode: 0o755)
        let userDatabase = try UnixSocketListener.bind(
            path: configuration.userDatabaseSocket, mode: 0o666, whenTaken: "another latchkey host run serves it; stop that one first"
        )
        let control: UnixSocketListener
        do {
            control = try UnixSocketListener.bind(path: configuration.controlSocketPath, mode: 0o600, whenTaken: "another latchkey host run serves it")
        } catch {
            userDatabase.remove()
            throw error
        }
        let service = UserDatabaseService(service: configuration.userDatabaseService, index: { [self] in currentIndex() })
        let own = getuid()
        let servers = [
            VarlinkServer(listener: userDatabase, logger: logger) { call, _, reply in try service.handle(call, reply: reply) },
            VarlinkServer(listener: control, logger: logger, admits: { $0.uid == 0 || $0.uid == own }) { [self] call, _, reply in
                try handleControl(call, reply: reply)
            },
        ]
        state.withLock { $0.servers = servers }
        try servers.forEach { try $0.start() }
        logger.info("answering user and group lookups", metadata: ["socket": .string(configuration.userDatabaseSocket)])
    }

    private func shutDown() {
        let servers = state.withLock { state in
            defer { state.servers = [] }
            return state.servers
        }
        servers.forEach { $0.stop() }
        waiters.withLock { $0.forEach { $0.done.signal() }; $0 = [] }
    }

    /// Seconds to the next sync: the interval a tenth either way after a success; after
    /// failures 5 s doubling up to the interval (at most 15 minutes).
    private func nextDelay() -> TimeInterval {
        let interval = configuration.interval
        let failures = state.withLock { $0.failures }
        let base = failures == 0 ? interval : min(max(interval, 1), 900, 5 * pow(2, Double(min(failures - 1, 20))))
        return max(0.05, base * Double.random(in: 0.9...1.1))
    }

    // MARK: Lookups

    /// The index lookups use: rebuilt first when `/etc/passwd` or `/etc/group` changed or
    /// the cache has just passed the offline limit (looked at no more than four times a
    /// second).
    func currentIndex() -> HostDirectoryIndex {
        let now = ContinuousClock.now
        let (index, due) = state.withLock { state -> (HostDirectoryIndex, Bool) in
            guard now >= state.nextCheck else { return (state.index, false) }
            state.nextCheck = now + .milliseconds(250)
            return (state.index, true)
        }
        guard due else { return index }
        let localChanged = state.withLock { $0.local }.isStale(passwd: configuration.passwdFile, group: configuration.groupFile)
        if localChanged {
            let local = LocalAccounts.read(passwd: configuration.passwdFile, group: configuration.groupFile)
            state.withLock { $0.local = local }
        }
        if localChanged || index.servesAccounts != servesAccounts() {
            rebuildIndex(reason: localChanged ? "local accounts changed" : "offline limit passed")
        }
        return state.withLock { $0.index }
    }

    /// Whether the provider confirmed the cached directory within the offline limit.
    private func servesAccounts() -> Bool {
        guard let confirmedAt = state.withLock({ $0.confirmation?.confirmedAt }) else { return false }
        return Date().timeIntervalSince1970 - Double(confirmedAt) <= configuration.offlineMaxAge
    }

    /// Builds the index from the state, swaps it in, and says in the journal what changed.
    private func rebuildIndex(reason: String) {
        let serves = servesAccounts()
        let (snapshot, local, old) = state.withLock { ($0.snapshot, $0.local, $0.index) }
        let index = HostDirectoryIndex(directory: snapshot?.directory, local: local, servesAccounts: serves)
        state.withLock { $0.index = index }
        if old.servesAccounts, !serves, snapshot != nil {
            logger.warning("the cache is older than the offline limit: no directory account is served until the provider answers", metadata: [
                "offlineMaxAge": .stringConvertible(Int(configuration.offlineMaxAge)),
            ])
        }
        if index.clashes != old.clashes {
            for line in index.clashes.prefix(100) { logger.warning("\(line)") }
            if index.clashes.count > 100 { logger.warning("and \(index.clashes.count - 100) more clashes with local accounts") }
        }
        if index.sudoGroups != old.sudoGroups || old === HostDirectoryIndex.empty { writeSudoers(index) }
        logger.debug("index rebuilt", metadata: ["reason": .string(reason), "accounts": .stringConvertible(index.accounts.count)])
    }

    // MARK: The control socket

    private struct StatusReply: Encodable {
        var status: HostStatus
    }

    private func handleControl(_ call: VarlinkCall, reply: (VarlinkReply) throws -> Void) throws {
        switch call.method {
        case HostControl.status:
            try reply(try .reply(StatusReply(status: status()), encoder: HostStatus.encoder()))
        case HostControl.sync:
            let done = DispatchSemaphore(value: 0)
            let after = state.withLock { $0.syncsStarted }
            waiters.withLock { $0.append((after, done)) }
            alarm.ring()
            _ = done.wait(timeout: .now() + 120)
            try reply(try .reply(StatusReply(status: status()), encoder: HostStatus.encoder()))
        default:
            try reply(.failure(VarlinkReply.methodNotFound, ["method": call.method.displaySafe(maximumLength: 256)]))
        }
    }

    /// What `latchkey host status` shows.
    func status() -> HostStatus {
        let index = currentIndex()
        return state.withLock { state in
            let confirmed = state.confirmation.map { Date(timeIntervalSince1970: TimeInterval($0.confirmedAt)) }
            return HostStatus(
                issuer: configuration.issuer.absoluteString, clientID: configuration.clientID, version: state.snapshot?.directory.version,
                lastSync: confirmed, lastAttempt: state.lastAttempt, lastError: state.lastError, providerReachable: state.providerReachable,
                cacheAge: confirmed.map { max(0, Int(Date().timeIntervalSince($0))) }, servingAccounts: index.servesAccounts,
                offlineMaxAge: Int(configuration.offlineMaxAge), accountsServed: index.accounts.count, groupsServed: index.groups.count,
                refused: state.refused, clashes: index.clashes.count, userDatabaseSocket: configuration.userDatabaseSocket, daemonPID: getpid()
            )
        }
    }

    // MARK: Syncing

    /// One read of the provider's directory into the cache and the index; a failure is a
    /// journal line and leaves both as they were.
    func syncOnce() async {
        let (known, key, number) = state.withLock { state in
            state.syncsStarted += 1
            return (state.snapshot?.directory.version, state.key, state.syncsStarted)
        }
        guard let key else { return }
        let walk = HostDirectoryWalk(embedded: configuration.embedded, issuer: configuration.issuer, clientID: configuration.clientID)
        let now = Int64(Date().timeIntervalSince1970)
        do {
            switch try await walk.read(known: known) {
            case .unchanged:
                guard let known else { break }
                let confirmation = HostDirectoryCache.Confirmation(version: known, confirmedAt: now)
                try cache.write(confirmation, key: key)
                state.withLock { $0.confirmation = confirmation }
                logger.info("directory unchanged", metadata: ["version": .string(known)])
            case .changed(let fetched):
                let screen = HostDirectoryScreen(idRange: configuration.idRange, homeBase: configuration.homeBase, shells: shells())
                let (directory, refusals) = screen.screen(fetched)
                for line in refusals.prefix(100) { logger.warning("\(line)") }
                if refusals.count > 100 { logger.warning("and \(refusals.count - 100) more refusals") }
                let snapshot = HostDirectoryCache.Snapshot(directory: directory, fetchedAt: now)
                let confirmation = HostDirectoryCache.Confirmation(version: directory.version, confirmedAt: now)
                try cache.write(snapshot, key: key)
                try cache.write(confirmation, key: key)
                state.withLock { state in
                    state.snapshot = snapshot
                    state.confirmation = confirmation
                    state.refused = refusals.count
                }
                logger.info("directory synced", metadata: [
                    "version": .string(directory.version), "accounts": .stringConvertible(directory.accounts.count),
                    "groups": .stringConvertible(directory.groups.count), "refused": .stringConvertible(refusals.count),
                ])
            }
            state.withLock { state in
                state.lastAttempt = Date()
                state.lastError = nil
                state.providerReachable = true
                state.failures = 0
            }
            await HostSSHFiles(issuer: configuration.issuer, caFile: configuration.sshCAFile, krlFile: configuration.sshKRLFile, logger: logger)
                .sync(transport: sshTransport)
        } catch {
            let reason = (error as? HostError)?.reason ?? String(describing: error)
            state.withLock { state in
                state.lastAttempt = Date()
                state.lastError = reason
                state.providerReachable = false
                state.failures += 1
            }
            logger.warning("directory sync failed; answering from the cache", metadata: ["error": .string(reason)])
        }
        rebuildIndex(reason: "sync")
        writeStatus()
        waiters.withLock { waiters in
            for waiter in waiters where waiter.after < number { waiter.done.signal() }
            waiters.removeAll { $0.after < number }
        }
    }

    /// The shells `/etc/shells` lists.
    private func shells() -> Set<String> {
        guard let data = try? HostFiles.read(configuration.shellsFile, maximumSize: 1 << 20) else { return [] }
        return Set(String(decoding: data, as: UTF8.self).split(separator: "\n").map { $0.trimmingSpaces() }.filter { $0.hasPrefix("/") })
    }

    private func writeStatus() {
        do {
            try HostFiles.replace(configuration.stateDirectory.appendingPathComponent("status.json"), with: try status().json(), mode: 0o644)
        } catch {
            logger.error("cannot write status.json", metadata: ["error": .string(String(describing: error))])
        }
    }

    /// Keeps ``Configuration/sudoersFile``: one `%group ALL=(ALL:ALL) ALL` line for each
    /// group with sudo on this host (names are POSIX names, so a line cannot say more).
    private func writeSudoers(_ index: HostDirectoryIndex) {
        guard let path = configuration.sudoersFile else { return }
        var text = "# Written by latchkey host run from the provider's directory; edits are overwritten.\n"
        for group in index.sudoGroups where POSIXName.isValid(group) { text += "%\(group) ALL=(ALL:ALL) ALL\n" }
        do {
            try HostFiles.replace(URL(fileURLWithPath: path), with: Data(text.utf8), mode: 0o440)
        } catch {
            logger.error("cannot write the sudoers file", metadata: ["file": .string(path), "error": .string(String(describing: error))])
        }
    }
}
