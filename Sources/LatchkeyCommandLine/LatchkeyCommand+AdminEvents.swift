import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import LatchkeyCrypto
import LatchkeyProtocol

extension LatchkeyCommand {
    /// `latchkey admin events`: the provider's audit log (docs/PROTOCOL.md, "Audit log"):
    /// list or follow it, or check that nobody altered it.
    struct Events: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "events",
            abstract: "Read the provider's tamper-evident audit log, or verify it.",
            subcommands: [ListEvents.self, VerifyEvents.self],
            defaultSubcommand: ListEvents.self
        )
    }

    /// `latchkey admin events [list]`.
    struct ListEvents: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Print audit events, oldest first (NDJSON with --json).")

        @OptionGroup var options: AdminOptions

        @Option(help: "Only events of this type (signin.succeeded, token.issued, …).")
        var type: String?

        @Option(help: "Only events about this identity id.")
        var subject: String?

        @Option(help: ArgumentHelp("Only events of the last DURATION (30s, 15m, 12h, 7d).", valueName: "duration"))
        var since: String?

        @Option(help: "Start after this event id.")
        var after: Int64 = 0

        @Flag(help: "Keep waiting for new events and print them as they come, until interrupted.")
        var follow = false

        func run() async throws {
            var query: [(String, String)] = [(AdminAPI.EventQuery.limit, String(AdminAPI.EventQuery.maximumLimit))]
            if let type { query.append((AdminAPI.EventQuery.type, type)) }
            if let subject { query.append((AdminAPI.EventQuery.subject, subject)) }
            if let since {
                let seconds = try Self.duration(since)
                query.append((AdminAPI.EventQuery.since, AuditEvent.formatTime(Date().addingTimeInterval(-seconds))))
            }
            var cursor = after
            while true {
                let page = try await options.send(AdminAPI.events, query: query + [(AdminAPI.EventQuery.after, String(cursor))])
                for event in page.events {
                    if options.json { try JSONOutput.printLine(event) } else { TextOutput.line(Self.line(event)) }
                }
                cursor = page.events.last?.id ?? cursor
                if page.next != nil { continue }
                guard follow else { return }
                try await Task.sleep(for: .seconds(1))
            }
        }

        static func duration(_ text: String) throws -> TimeInterval {
            try DurationOption.seconds(text)
        }

        /// One event as a line: time, id, type, outcome, then `name=value` members, each
        /// value made safe to show (an address or agent comes from the requester).
        static func line(_ event: AuditEvent) -> String {
            var parts = [AuditEvent.formatTime(event.time), "#\(event.id)", TextOutput.field(event.type.rawValue, maximumLength: 64), event.outcome.rawValue]
            func add(_ name: String, _ value: String?) {
                if let value { parts.append(name + "=" + TextOutput.field(value, maximumLength: 300).replacing(" ", with: "\u{2423}")) }
            }
            add("error", event.error)
            add("actor", event.actor.kind.rawValue + (event.actor.id.map { ":" + $0 } ?? ""))
            add("subject", event.subject)
            add("client", event.client)
            add("address", event.address)
            add("credential", event.details?.credential)
            add("grant", event.details?.grantType)
            add("scope", event.details?.scope)
            add("username", event.details?.username)
            add("limit", event.details?.limit)
            add("through", event.details?.through.map(String.init))
            add("agent", event.userAgent)
            return parts.joined(separator: " ")
        }
    }

    /// `latchkey admin events verify`: exit 0 and "intact", or exit 1 naming the first
    /// event altered, removed, inserted or out of order.
    struct VerifyEvents: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Check the audit log's hash chain, authentication codes and signed checkpoints.",
            discussion: "Ask a running provider (--idp), or read its store directly (--data-dir for SQLite, --database for PostgreSQL; the store key as for serve)."
        )

        @Option(help: "The identity provider's issuer URL (asks the provider to check its log).")
        var idp: String?

        @Option(help: ArgumentHelp("File holding the admin token (default: $LATCHKEY_ADMIN_TOKEN, or the systemd credential latchkey-admin-token).", valueName: "file"))
        var adminTokenFile: String?

        /// The store read offline (`--data-dir` or `--database`, and its key).
        @OptionGroup var store: ProviderStoreOptions

        @Flag(help: "Print JSON.")
        var json = false

        @Option(help: ArgumentHelp("A head this log must still run through, as an earlier verify printed it (ID:HASH): a log cut back, put back to an older copy or emptied fails.", valueName: "id:hash"))
        var expect: String?

        @Option(help: ArgumentHelp("A file that keeps the head outside the store: checked against when it exists, rewritten with the new head after an intact verify. Keep it where the store's writers cannot write.", valueName: "file"))
        var headFile: String?

        func validate() throws {
            let given = [idp != nil, store.dataDir != nil, store.database != nil].filter { $0 }.count
            guard given == 1 else { throw ValidationError("give one of --idp, --data-dir or --database") }
            guard expect == nil || headFile == nil else { throw ValidationError("give --expect or --head-file, not both") }
            if let expect, AuditHeadMark(expect) == nil { throw ValidationError("--expect takes ID:HASH, as verify printed it after head:") }
        }

        func run() async throws {
            let expected = try expect.flatMap(AuditHeadMark.init) ?? headFile.flatMap(Self.keptHead)
            let verification: AdminAPI.EventVerification
            if let idp {
                let options = try AdminOptions.parse(["--idp", idp] + (adminTokenFile.map { ["--admin-token-file", $0] } ?? []))
                verification = try await options.send(AdminAPI.verifyEvents, query: expected.map { [(AdminAPI.EventQuery.expect, $0.description)] } ?? [])
            } else {
                // The store itself is read in `latchkey-provider` (``ProviderCommands``).
                verification = try await ProviderCommands.runner().verifyEvents(store: store, expecting: expected)
            }
            if let headFile, verification.intact, let head = verification.head {
                try Self.keep(head, in: headFile)
            }
            if json {
                try JSONOutput.print(verification)
            } else if verification.intact {
                TextOutput.line("intact: \(verification.checked) events checked (ids \(verification.anchor + 1) to \(verification.newest)), \(verification.checkpoints) signed checkpoints")
                if let head = verification.head { TextOutput.line("head: \(head)") }
            } else {
                TextOutput.line("broken at event \(verification.firstBroken ?? 0): \(TextOutput.field(verification.problem ?? "", maximumLength: 512))")
            }
            if !verification.intact { throw ExitCode(1) }
        }

        /// The head `--head-file` keeps, when the file exists: a file only its owner (root
        /// or whoever runs this) may write, holding one `ID:HASH` line.
        static func keptHead(_ path: String) throws -> AuditHeadMark? {
            guard FileManager.default.fileExists(atPath: path) else { return nil }
            let text = String(decoding: try TrustedFile.read(path, what: "the kept audit head", maximumSize: 256), as: UTF8.self)
            guard let mark = AuditHeadMark(text.trimmingWhitespace()) else {
                throw CommandFailure("\(path.displaySafe(maximumLength: 256)) does not hold a head (ID:HASH)")
            }
            return mark
        }

        /// Writes `head` to `path` whole or not at all: a temporary file beside it, synced,
        /// renamed over it, 0644.
        static func keep(_ head: String, in path: String) throws {
            let url = URL(fileURLWithPath: path)
            let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(getpid()).tmp")
            let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw CommandFailure("cannot write \(temporary.path.displaySafe(maximumLength: 256)): \(String(cString: strerror(errno)))") }
            let bytes = Array((head + "\n").utf8)
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            let synced = fsync(descriptor) == 0
            close(descriptor)
            guard written == bytes.count, synced, rename(temporary.path, path) == 0 else {
                unlink(temporary.path)
                throw CommandFailure("cannot keep the head in \(path.displaySafe(maximumLength: 256)): \(String(cString: strerror(errno)))")
            }
        }
    }
}
