import Foundation

/// How `--json` output is written: `Encodable` values, keys sorted, slashes unescaped;
/// a document pretty-printed, an event stream one object per line (written at once, so
/// whoever reads a long-running command sees each line when it happens).
enum JSONOutput {
    static func data(_ value: some Encodable, pretty: Bool) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// One pretty-printed document on standard output, written at once rather than
    /// through stdio's buffer.
    static func print(_ value: some Encodable) throws {
        FileHandle.standardOutput.write(try data(value, pretty: true) + Data("\n".utf8))
    }

    /// One compact line on standard output, unbuffered.
    static func printLine(_ value: some Encodable) throws {
        FileHandle.standardOutput.write(try data(value, pretty: false) + Data("\n".utf8))
    }
}
