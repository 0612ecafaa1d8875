import Foundation

/// Reads what ``TicketWriter`` wrote, strictly: every read returns nil past the end, on a
/// length longer than what is left, on an optional's flag other than 0 or 1, and on text
/// that is not UTF-8; ``isAtEnd`` tells whether anything is left over.
struct TicketReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: some Collection<UInt8>) {
        self.bytes = Array(bytes)
    }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func text() -> String? {
        guard let count = length(), let slice = take(count) else { return nil }
        return String(validating: slice, as: UTF8.self)
    }

    /// `.some(nil)` for an absent value, nil when the bytes are not an optional text.
    mutating func optionalText() -> String?? {
        guard let flag = take(1)?.first else { return nil }
        switch flag {
        case 0: return .some(nil)
        case 1: return text().map { .some($0) }
        default: return nil
        }
    }

    mutating func data() -> Data? {
        guard let count = length(), let slice = take(count) else { return nil }
        return Data(slice)
    }

    mutating func dataList() -> [Data]? {
        // Each member takes at least its 4-byte length, which bounds a forged count.
        guard let count = length(), count <= (bytes.count - offset) / 4 else { return nil }
        var values: [Data] = []
        values.reserveCapacity(count)
        for _ in 0..<count {
            guard let value = data() else { return nil }
            values.append(value)
        }
        return values
    }

    mutating func date() -> Date? {
        guard let slice = take(8) else { return nil }
        let pattern = slice.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let seconds = Double(bitPattern: pattern)
        guard seconds.isFinite else { return nil }
        return Date(timeIntervalSinceReferenceDate: seconds)
    }

    private mutating func length() -> Int? {
        guard let slice = take(4) else { return nil }
        return slice.reduce(0) { $0 << 8 | Int($1) }
    }

    private mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, count <= bytes.count - offset else { return nil }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }
}
