/// Where the provider allocates POSIX user and group IDs (`serve --posix-uid-range
/// FIRST-LAST`; docs/PROTOCOL.md section 14). Users and groups share one range, since a
/// user private group has `gid` = `uid`.
///
/// The default, 65536–99999, is clear of every range a Debian or Ubuntu host hands out or
/// keeps for itself:
/// - Debian policy §9.2.2: 0–99 static system, 100–999 dynamic system, 1000–59999 local
///   users (what `adduser` allocates), 60000–65535 reserved (`nobody` is 65534, 65535 is
///   the 16-bit `-1`);
/// - systemd's UIDS-GIDS document: 60001–60513 `systemd-homed`, 60514–60577 and
///   61184–65519 for `DynamicUser=` and its kin, 524288–1879048191 for containers, and
///   the foreign range 2147352576–2147418111;
/// - `useradd`'s subordinate IDs, from 100000 in `/etc/subuid` and `/etc/subgid`
///   (`SUB_UID_MIN`, 65536 to each user).
///
/// 34,464 IDs. A larger fleet picks a range in 1879048192–2147352575, above the container
/// ranges, and accepts that `lastlog`'s sparse file grows with the largest `uid`. A range
/// that overlaps any of the ranges above is refused at start, and so is anything past
/// 2147483647 (tools that hold an ID in a signed 32-bit integer).
public struct POSIXIDRange: Sendable, Hashable, CustomStringConvertible {
    public let first: Int64
    public let last: Int64

    public static let `default` = POSIXIDRange(checkedFirst: 65536, last: 99999)

    /// Ranges a host's own accounts, containers or kernel use: never the provider's.
    static let forbidden: [(range: ClosedRange<Int64>, what: String)] = [
        (0...999, "Debian's system accounts (0–999)"),
        (1000...59999, "the local users adduser hands out (1000–59999)"),
        (60000...65535, "the IDs Debian and systemd reserve (60000–65535: systemd-homed, DynamicUser, nobody, 16-bit -1)"),
        (100_000...524_287, "the subordinate IDs useradd hands out from 100000 (/etc/subuid, /etc/subgid)"),
        (524_288...1_879_048_191, "systemd's container ranges (524288–1879048191) and the subordinate IDs within them"),
        (2_147_352_576...2_147_418_111, "systemd's foreign UID range (2147352576–2147418111)"),
        (2_147_483_648...4_294_967_295, "IDs past 2147483647, which tools holding a signed 32-bit ID misread"),
    ]

    /// A range between `first` and `last` inclusive, refused when it overlaps any of the
    /// host's own ranges.
    public init(first: Int64, last: Int64) throws(ReferenceProviderError) {
        guard first <= last else {
            throw ReferenceProviderError(.invalidConfiguration, "POSIX ID range \(first)-\(last): the first ID is past the last")
        }
        for (range, what) in Self.forbidden where range.overlaps(first...last) {
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
