import Foundation

/// Writes a ``TicketLayout`` value: each text and byte string as a 4-byte big-endian
/// length and its bytes, an optional as one byte 0 (absent) or 1 then the value, a list as
/// its 4-byte count then its members, a date as the 8 bytes of its `Double` (seconds since
/// 2001), so it reads back exactly.
struct TicketWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    mutating func text(_ value: String) {
        length(value.utf8.count)
        bytes.append(contentsOf: value.utf8)
    }

    mutating func text(ifPresent value: String?) {
        guard let value else {
            bytes.append(0)
            return
        }
        bytes.append(1)
        text(value)
    }

    mutating func data(_ value: Data) {
        length(value.count)
        bytes.append(contentsOf: value)
    }

    mutating func dataList(_ values: [Data]) {
        length(values.count)
        for value in values { data(value) }
    }

    mutating func date(_ value: Date) {
        let pattern = value.timeIntervalSinceReferenceDate.bitPattern
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: pattern >> UInt64(shift)))
        }
    }

    private mutating func length(_ count: Int) {
        // A ticket opens only up to TicketSealer.maximumLength, far below 2^32; a longer
        // member would make a ticket that never opens, not a misread one.
        let count = UInt32(clamping: count)
        bytes.append(contentsOf: [UInt8(truncatingIfNeeded: count >> 24), UInt8(truncatingIfNeeded: count >> 16), UInt8(truncatingIfNeeded: count >> 8), UInt8(truncatingIfNeeded: count)])
    }
}
