/// The user and group IDs a Debian or Ubuntu host hands out or keeps for itself, which a
/// directory's accounts and groups must never take (docs/PROTOCOL.md section 14). The
/// provider refuses a `--posix-uid-range` that overlaps any of them; a host refuses a
/// directory entry whose ID falls in one, whatever the provider says.
///
/// - Debian policy §9.2.2: 0–99 static system, 100–999 dynamic system, 1000–59999 local
///   users (what `adduser` allocates), 60000–65535 reserved (`nobody` is 65534, 65535 is
///   the 16-bit `-1`);
/// - systemd's UIDS-GIDS document: 60001–60513 `systemd-homed`, 60514–60577 and
///   61184–65519 for `DynamicUser=` and its kin, 524288–1879048191 for containers, and
///   the foreign range 2147352576–2147418111;
/// - `useradd`'s subordinate IDs, from 100000 in `/etc/subuid` and `/etc/subgid`
///   (`SUB_UID_MIN`, 65536 to each user).
public enum POSIXHostIDs {
    /// Each range a host keeps, with what it is kept for.
    public static let reserved: [(range: ClosedRange<Int64>, what: String)] = [
        (0...999, "Debian's system accounts (0–999)"),
        (1000...59999, "the local users adduser hands out (1000–59999)"),
        (60000...65535, "the IDs Debian and systemd reserve (60000–65535: systemd-homed, DynamicUser, nobody, 16-bit -1)"),
        (100_000...524_287, "the subordinate IDs useradd hands out from 100000 (/etc/subuid, /etc/subgid)"),
        (524_288...1_879_048_191, "systemd's container ranges (524288–1879048191) and the subordinate IDs within them"),
        (2_147_352_576...2_147_418_111, "systemd's foreign UID range (2147352576–2147418111)"),
        (2_147_483_648...4_294_967_295, "IDs past 2147483647, which tools holding a signed 32-bit ID misread"),
    ]

    /// What the first reserved range that `ids` overlaps is kept for, or nil.
    public static func overlap(_ ids: ClosedRange<Int64>) -> String? {
        reserved.first(where: { $0.range.overlaps(ids) })?.what
    }

    /// Whether `id` is one a directory may hand out: not negative, in no reserved range.
    public static func isAssignable(_ id: Int64) -> Bool {
        id >= 0 && overlap(id...id) == nil
    }
}
