import LatchkeyProtocol

/// Where the provider allocates POSIX user and group IDs (`serve --posix-uid-range
/// FIRST-LAST`; docs/PROTOCOL.md section 14). Users and groups share one range, since a
/// user private group has `gid` = `uid`.
///
/// The default, 65536–99999, is clear of every range a Debian or Ubuntu host hands out or
/// keeps for itself (``POSIXHostIDs`` lists them: Debian policy §9.2.2, systemd's UIDS-GIDS
/// document, `useradd`'s subordinate IDs).
///
/// 34,464 IDs. A larger fleet picks a range in 1879048192–2147352575, above the container
/// ranges, and accepts that `lastlog`'s sparse file grows with the largest `uid`. A range
/// that overlaps any of the ranges above is refused at start, and so is anything past
/// 2147483647 (tools that hold an ID in a signed 32-bit integer).
public struct POSIXIDRange: Sendable, Hashable, CustomStringConvertible {
    public let first: Int64
    public let last: Int64

    public static let `default` = POSIXIDRange(checkedFirst: 65536, last: 99999)

    /// A range between `first` and `last` inclusive, refused when it overlaps any of the
    /// host's own ranges.
    public init(first: Int64, last: Int64) throws(ReferenceProviderError) {
        guard first <= last else {
            throw ReferenceProviderError(.invalidConfiguration, "POSIX ID range \(first)-\(last): the first ID is past the last")
        }
        if let what = POSIXHostIDs.overlap(first...last) {
            throw ReferenceProviderError(.invalidConfiguration, "POSIX ID range \(first)-\(last) overlaps \(what); choose one within 65536–99999 or 1879048192–2147352575")
        }
        guard first >= 0 else {
            throw ReferenceProviderError(.invalidConfiguration, "POSIX ID range \(first)-\(last): IDs are not negative")
        }
        self.first = first
        self.last = last
    }

    /// `FIRST-LAST`, as `serve --posix-uid-range` takes it.
    public init(parsing text: String) throws(ReferenceProviderError) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard text.utf8.count <= 32, parts.count == 2, let first = Int64(parts[0]), let last = Int64(parts[1]) else {
            throw ReferenceProviderError(.invalidConfiguration, "a POSIX ID range is FIRST-LAST, two decimal IDs (such as 65536-99999)")
        }
        try self.init(first: first, last: last)
    }

    private init(checkedFirst first: Int64, last: Int64) {
        self.first = first
        self.last = last
    }

    public var description: String { "\(first)-\(last)" }

    /// How many IDs the range holds.
    public var count: Int64 { last - first + 1 }
}
