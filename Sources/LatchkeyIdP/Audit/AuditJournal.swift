import Foundation
import Glibc
import LatchkeyProtocol

/// A copy of each sealed audit event in the systemd journal (`serve --audit-syslog`), as
/// structured fields (`LATCHKEY_AUDIT_TYPE=signin.succeeded`, …), so `journalctl
/// LATCHKEY_AUDIT_TYPE=signin.failed` or a log shipper picks them out. Sent over the
/// journal's native protocol (systemd's "Native Journal Protocol": one datagram a
/// message to `/run/systemd/journal/socket`, each field `NAME=value\n`, or, for a value
/// holding a newline, `NAME\n`, its length as 8 bytes little-endian, the value and `\n`).
/// The copy is sent after the sealing commits, by the instance that sealed; the chain in
/// the store stays the record, and a journal that is down loses only its copy.
final class AuditJournal: Sendable {
    /// Where journald listens.
    static let defaultSocket = "/run/systemd/journal/socket"
    private let descriptor: Int32
    private let address: sockaddr_un

    /// Throws when `path` names no socket (journald is not running there).
    init(path: String = AuditJournal.defaultSocket) throws {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count < MemoryLayout.size(ofValue: address.sun_path), !bytes.contains(0) else {
            throw StoreError.invalidConfiguration("the journal socket path \(path) is empty or too long")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw StoreError.invalidConfiguration("cannot make a socket for the journal (errno \(errno))") }
        guard (try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType) == .typeSocket else {
            close(descriptor)
            throw StoreError.invalidConfiguration("--audit-syslog: no journal socket at \(path) (is systemd-journald running?)")
        }
        self.descriptor = descriptor
        self.address = address
    }

    deinit {
        close(descriptor)
    }

    /// Sends `event`; false when the journal did not take it.
    @discardableResult
    func send(_ event: AuditEvent) -> Bool {
        let datagram = Self.datagram(event)
        var address = address
        let sent = datagram.withUnsafeBytes { bytes in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
        return sent == datagram.count
    }

    /// The event's fields in the native protocol.
    static func datagram(_ event: AuditEvent) -> Data {
        var fields: [(String, String)] = [
            ("MESSAGE", "latchkey audit #\(event.id) \(event.type.rawValue) \(event.outcome.rawValue)"),
            // notice for refusals, info for the rest (syslog(3) levels).
            ("PRIORITY", event.outcome == .failure ? "5" : "6"),
            ("SYSLOG_IDENTIFIER", "latchkey-audit"),
            ("LATCHKEY_AUDIT_ID", String(event.id)),
            ("LATCHKEY_AUDIT_TIME", AuditEvent.formatTime(event.time)),
            ("LATCHKEY_AUDIT_TYPE", event.type.rawValue),
            ("LATCHKEY_AUDIT_OUTCOME", event.outcome.rawValue),
            ("LATCHKEY_AUDIT_ACTOR_KIND", event.actor.kind.rawValue),
        ]
        let optional: [(String, String?)] = [
            ("LATCHKEY_AUDIT_ERROR", event.error), ("LATCHKEY_AUDIT_ACTOR_ID", event.actor.id), ("LATCHKEY_AUDIT_SUBJECT", event.subject),
            ("LATCHKEY_AUDIT_CLIENT", event.client), ("LATCHKEY_AUDIT_ADDRESS", event.address), ("LATCHKEY_AUDIT_USER_AGENT", event.userAgent),
            ("LATCHKEY_AUDIT_DETAILS", event.details.flatMap { try? JSONEncoder().encode($0) }.map { String(decoding: $0, as: UTF8.self) }),
            ("LATCHKEY_AUDIT_HASH", event.hash),
        ]
        fields += optional.compactMap { name, value in value.map { (name, $0) } }
        var data = Data()
        for (name, value) in fields {
            let bytes = Data(value.utf8)
            if bytes.contains(UInt8(ascii: "\n")) {
                data.append(Data(name.utf8))
                data.append(UInt8(ascii: "\n"))
                withUnsafeBytes(of: UInt64(bytes.count).littleEndian) { data.append(contentsOf: $0) }
                data.append(bytes)
            } else {
                data.append(Data("\(name)=".utf8))
                data.append(bytes)
            }
            data.append(UInt8(ascii: "\n"))
        }
        return data
    }
}
