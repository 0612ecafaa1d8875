import Foundation
import LatchkeyCrypto

/// Writes a ``TicketLayout`` value in the SSH wire encoding (RFC 4251 §5, ``SSHWireWriter``):
/// each text and byte string a `string`, an optional a `boolean` then the value, a list its
/// `uint32` count then its members, a date the `uint64` bits of its `Double` (seconds since
/// 2001), so it reads back exactly.
struct TicketWriter {
    private var wire = SSHWireWriter()

    var bytes: Data { wire.bytes }

    mutating func text(_ value: String) {
        wire.string(value)
    }

    mutating func text(ifPresent value: String?) {
        wire.boolean(value != nil)
        if let value { wire.string(value) }
    }

    mutating func data(_ value: Data) {
        wire.string(value)
    }

    mutating func dataList(_ values: [Data]) {
        // A ticket opens only up to TicketSealer.maximumLength, far below 2^32 members.
        wire.uint32(UInt32(clamping: values.count))
        for value in values { wire.string(value) }
    }

    mutating func date(_ value: Date) {
        wire.uint64(value.timeIntervalSinceReferenceDate.bitPattern)
    }
}
