import Foundation
import LatchkeyCrypto

/// Reads what ``TicketWriter`` wrote with the strict ``SSHWireReader``: every read returns
/// nil past the end, on a length longer than what is left or than a ticket can hold, on an
/// optional's flag other than 0 or 1, and on text that is not UTF-8; ``isAtEnd`` tells
/// whether anything is left over.
struct TicketReader {
    private var wire: SSHWireReader

    init(_ bytes: some Collection<UInt8>) {
        wire = SSHWireReader(Data(bytes), subject: "ticket")
    }

    var isAtEnd: Bool { wire.isAtEnd }

    mutating func text() -> String? {
        try? wire.text(maximumLength: TicketSealer.maximumLength)
    }

    /// `.some(nil)` for an absent value, nil when the bytes are not an optional text.
    mutating func optionalText() -> String?? {
        guard let present = try? wire.boolean() else { return nil }
        return present ? text().map { .some($0) } : .some(nil)
    }

    mutating func data() -> Data? {
        try? wire.string(maximumLength: TicketSealer.maximumLength)
    }

    mutating func dataList() -> [Data]? {
        // Each member takes at least its 4-byte length, which bounds a forged count.
        guard let count = try? wire.uint32(), Int(count) <= wire.remaining / 4 else { return nil }
        var values: [Data] = []
        values.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let value = data() else { return nil }
            values.append(value)
        }
        return values
    }

    mutating func date() -> Date? {
        guard let pattern = try? wire.uint64() else { return nil }
        let seconds = Double(bitPattern: pattern)
        guard seconds.isFinite else { return nil }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }
}
