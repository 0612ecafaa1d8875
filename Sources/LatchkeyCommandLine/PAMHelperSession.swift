#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Latchkey
import LatchkeyCrypto
import LatchkeyProtocol

/// The helper's side of the line protocol `pam_latchkey.so` speaks on the helper's stdin
/// and stdout (docs/PROTOCOL.md section 13, "The module and its helper"). The module
/// writes `LATCHKEY-PAM/1`, then `name=value` lines (values percent-escaped: every byte
/// outside 0x21–0x7E, and `%`), then an empty line. The helper answers `LATCHKEY-PAM/1`,
/// then any of `INFO text`, `ERROR text`, `PROMPT text` (the module answers `CONTINUE`
/// once the person pressed Enter), and ends with `RESULT code text`. Each line is at most
/// 4096 bytes; the module reads at most 256 of them.
struct PAMHelperSession {
    static let version = "LATCHKEY-PAM/1"
    static let maximumLine = 4096

    /// What the module sends: the PAM items.
    struct Request: Equatable {
        var service: String
        var user: String
        var remoteHost: String?
        var remoteUser: String?
        var tty: String?
    }

    /// The verdicts the module maps to PAM codes.
    enum Verdict: String {
        case success
        case authError = "auth_err"
        case unavailable = "authinfo_unavail"
        case userUnknown = "user_unknown"
        /// Not this module's account (a local one): the other modules decide.
        case ignore
        /// The account step's refusal.
        case permissionDenied = "perm_denied"
        /// The session step's failure.
        case sessionError = "session_err"
    }

    private var buffered: [UInt8] = []
    private let input: Int32
    private let output: Int32

    init(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) {
        self.input = input
        self.output = output
    }

    /// One line from the module, without its newline; nil at the end of input. A line
    /// over the limit, or holding a NUL, is refused.
    mutating func readLine() throws -> String? {
        while true {
            if let newline = buffered.firstIndex(of: 0x0A) {
                let line = Array(buffered[..<newline])
                buffered.removeSubrange(...newline)
                guard !line.contains(0) else { throw CommandFailure("the module sent a NUL") }
                return String(decoding: line, as: UTF8.self)
            }
            guard buffered.count < Self.maximumLine else { throw CommandFailure("the module sent a line over \(Self.maximumLine) bytes") }
            var chunk = [UInt8](repeating: 0, count: Self.maximumLine)
            let count = chunk.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return nil }
            buffered += chunk.prefix(count)
        }
    }

    /// The module's request: the version line, at most 16 items, an empty line. Unknown
    /// items are passed over (a newer module may send more); `service` and `user` must be
    /// there.
    mutating func readRequest() throws -> Request {
        guard try readLine() == Self.version else { throw CommandFailure("the module does not speak \(Self.version)") }
        var items: [String: String] = [:]
        for _ in 0..<17 {
            guard let line = try readLine() else { throw CommandFailure("the module's request ended early") }
            if line.isEmpty {
                guard let service = items["service"], !service.isEmpty, let user = items["user"], !user.isEmpty else {
                    throw CommandFailure("the module's request names no service or user")
                }
                func optional(_ name: String) -> String? { items[name].flatMap { $0.isEmpty ? nil : $0 } }
                return Request(service: service, user: user, remoteHost: optional("rhost"), remoteUser: optional("ruser"), tty: optional("tty"))
            }
            guard let equals = line.firstIndex(of: "=") else { throw CommandFailure("the module sent a line that is not name=value") }
            items[String(line[..<equals])] = try Self.unescape(line[line.index(after: equals)...])
        }
        throw CommandFailure("the module's request has too many items")
    }

    /// Percent-escapes as the module decodes: control bytes, DEL and `%`; UTF-8 is kept.
    static func escape(_ text: String) -> String {
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            if byte < 0x20 || byte == 0x7F || byte == UInt8(ascii: "%") {
                bytes += Array(("%" + HexadecimalText.padded(byte, digits: 2, uppercase: true)).utf8)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The value of an item: `%XX` decoded, anything else as it is; the bytes must be UTF-8.
    static func unescape(_ text: Substring) throws -> String {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let first = utf8.index(after: index)
                guard first < utf8.endIndex, utf8.index(after: first) < utf8.endIndex,
                      let value = UInt8(String(decoding: [utf8[first], utf8[utf8.index(after: first)]], as: UTF8.self), radix: 16)
                else { throw CommandFailure("the module sent a malformed escape") }
                bytes.append(value)
                index = utf8.index(first, offsetBy: 2)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else { throw CommandFailure("the module sent an item that is not UTF-8") }
        return decoded
    }

    /// Writes one protocol line (cut to the limit; a text's newlines make more lines).
    func write(_ kind: String, _ text: String) {
        for part in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = kind.isEmpty ? String(part) : kind + " " + Self.escape(String(part))
            if line.utf8.count >= Self.maximumLine { line = String(decoding: Array(line.utf8.prefix(Self.maximumLine - 1)), as: UTF8.self) }
            let bytes = Array((line + "\n").utf8)
            var written = 0
            while written < bytes.count {
                let count = bytes[written...].withUnsafeBytes { Glibc.write(output, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return }
                written += count
            }
        }
    }

    func start() { write("", Self.version) }
    func info(_ text: String) { write("INFO", text) }
    func error(_ text: String) { write("ERROR", text) }
    func prompt(_ text: String) { write("PROMPT", text) }
    func result(_ verdict: Verdict, _ text: String) { write("RESULT " + verdict.rawValue, text.replacing("\n", with: " ")) }
}
