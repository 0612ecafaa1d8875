import LatchkeyCrypto

/// A point of the audit log's chain kept outside the store: an event's id and its link,
/// written `ID:HASH` (the hash in base64url; docs/PROTOCOL.md, "Audit log"). Every
/// verification prints the newest as ``AdminAPI/EventVerification/head``; an operator who
/// keeps it (`latchkey admin events verify --head-file FILE`, or a note of it) and hands it
/// back (`--expect ID:HASH`) learns whether the log still runs through it: a log cut back
/// to an earlier checkpoint, a store put back to an older copy, or one emptied, all verify
/// on their own, and none of them runs through a head seen before.
public struct AuditHeadMark: Hashable, Sendable, CustomStringConvertible {
    /// The event's id (0: before any event).
    public var id: Int64
    /// The chain's link after that event (32 bytes).
    public var hash: [UInt8]

    public init(id: Int64, hash: [UInt8]) {
        self.id = id
        self.hash = hash
    }

    /// Reads `ID:HASH`: a whole number of at most 19 digits, a colon, 43 characters of
    /// base64url naming 32 bytes; nil for anything else.
    public init?(_ text: String) {
        guard text.utf8.count <= 64 else { return nil }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...19).contains(parts[0].count), parts[0].allSatisfy(\.isASCII), parts[0].allSatisfy(\.isNumber),
              let id = Int64(parts[0]), id >= 0, parts[1].count == 43, let hash = try? Base64URL.decode(String(parts[1])), hash.count == 32
        else { return nil }
        self.init(id: id, hash: Array(hash))
    }

    public var description: String { "\(id):\(Base64URL.encode(hash))" }
}
