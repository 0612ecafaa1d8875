public import Foundation

/// A power cut for one child process's files, simulated: `Tests/PowerCut/powercut.c`,
/// preloaded into the child, logs what each write to the named files replaces and forgets
/// it at each `fsync`/`fdatasync`; after the child is SIGKILLed, ``restore()`` plays the
/// logs backwards, so every file holds what it held at its last sync, as a disk does
/// once the power and the page cache are gone. A SIGKILL alone cannot show a missing
/// sync (the kernel still writes the page cache out); this can.
public final class PowerCut: Sendable {
    /// The files rolled back to their last sync.
    public let files: [URL]
    let logs: TemporaryDirectory
    let library: URL

    /// Compiles the shim once per test run (with the toolchain's clang, or cc) and makes a
    /// log folder for `files`.
    public init(files: [URL]) async throws {
        self.files = files
        self.logs = try TemporaryDirectory()
        self.library = try await Self.compiledLibrary()
    }

    /// What the child's environment needs: the shim preloaded and told which files and
    /// where to log.
    public var environment: [String: String] {
        [
            "LD_PRELOAD": library.path,
            "LATCHKEY_POWERCUT_FILES": files.map(\.path).joined(separator: ":"),
            "LATCHKEY_POWERCUT_LOG": logs.url.path,
        ]
    }

    /// What a cut rolled back: the writes undone, and how many files they were in.
    public struct Rollback: Sendable {
        public var writes = 0
        public var files = 0
    }

    /// Rolls every file back to its last sync and empties the logs. Call only once the
    /// child has exited (it writes the logs).
    @discardableResult
    public func restore() throws -> Rollback {
        var rollback = Rollback()
        for file in files {
            let log = logs.url.appendingPathComponent(file.path.replacingOccurrences(of: "/", with: "_") + ".undo")
            guard let bytes = FileManager.default.contents(atPath: log.path), !bytes.isEmpty else { continue }
            let records = try Self.records(bytes, log: log)
            let handle = try FileHandle(forUpdating: file)
            defer { try? handle.close() }
            // Newest first, so the oldest record's size is the one the file ends with.
            for record in records.reversed() {
                try handle.seek(toOffset: record.offset)
                try handle.write(contentsOf: record.previous)
                try handle.truncate(atOffset: record.size)
            }
            try handle.synchronize()
            try Data().write(to: log)
            rollback.writes += records.count
            rollback.files += 1
        }
        return rollback
    }

    struct Record {
        var offset: UInt64
        var previous: Data
        var size: UInt64
    }

    /// The log's records: offset, length and size as three little-endian UInt64, then the
    /// bytes the write replaced. A record cut short (the child killed while logging, before
    /// its write) is dropped: its write never happened.
    static func records(_ bytes: Data, log: URL) throws -> [Record] {
        var records: [Record] = []
        var at = bytes.startIndex
        func word(_ index: Int) -> UInt64 {
            bytes[index..<index + 8].reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        while bytes.endIndex - at >= 24 {
            let (offset, length, size) = (word(at), word(at + 8), word(at + 16))
            guard length <= UInt64(bytes.endIndex - at - 24) else { break }
            records.append(Record(offset: offset, previous: bytes[at + 24..<at + 24 + Int(length)], size: size))
            at += 24 + Int(length)
        }
        return records
    }

    static func compiledLibrary() async throws -> URL {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("PowerCut/powercut.c")
        return try await CompiledC.build(source, as: "powercut.so", flags: ["-shared", "-fPIC", "-O1", "-Wall"], libraries: ["-ldl", "-lpthread"])
    }
}
