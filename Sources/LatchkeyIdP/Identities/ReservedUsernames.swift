import LatchkeyProtocol

/// Names a Linux host keeps for its own system and administrative accounts and groups
/// (docs/SECURITY.md, "Reserved names"). An identity can never take one: sign-up,
/// recovery, an admin's create or rename refuse it with `reserved_username`. And a
/// username is a certificate principal only when it is not one of these, so a certificate
/// names `root` only when an admin granted that exact principal (`latchkey admin
/// set-ssh-principals`), whatever the holder is called.
///
/// Why: OpenSSH checks a certificate's principals against the account name as bytes, and
/// Debian's default `PermitRootLogin prohibit-password` lets a certificate in as uid 0.
/// A stranger who signs up as `root` must not get a certificate that says `root`.
///
/// Compared as ``Username/key(_:)`` (NFKC, lowercase) and by look-alike
/// ``Username/skeleton(_:)``, so `Root`, `ＲＯＯＴ` and `rооt` in Cyrillic are refused too.
public struct ReservedUsernames: Sendable, Hashable {
    /// Debian's base-passwd users and groups (`/usr/share/base-passwd/passwd.master` and
    /// `group.master` of base-passwd 3.6, with `gnats` from older releases), the names
    /// other distributions and common packages use for their administrators and daemons,
    /// and groups that hand out root by another door (`docker`, `lxd`, `libvirt`, `disk`).
    public static let system: Set<String> = [
        // base-passwd users
        "root", "daemon", "bin", "sys", "sync", "games", "man", "lp", "mail", "news", "uucp", "proxy", "www-data",
        "backup", "list", "irc", "gnats", "nobody",
        // base-passwd groups
        "adm", "tty", "disk", "kmem", "dialout", "fax", "voice", "cdrom", "floppy", "tape", "sudo", "audio", "dip",
        "operator", "src", "shadow", "utmp", "video", "sasl", "plugdev", "staff", "users", "nogroup",
        // administrators elsewhere, and groups as good as root
        "admin", "administrator", "wheel", "toor", "halt", "shutdown", "docker", "lxd", "libvirt", "kvm", "input",
        "render", "netdev", "sgx", "ssl-cert", "crontab", "messagebus", "polkitd", "sshd", "ntp", "tss", "postgres",
        "nslcd", "sssd", "latchkey",
    ]

    /// Prefixes Debian and systemd give their own accounts: `_apt`, `_chrony`,
    /// `systemd-network`, `systemd-journal`, ….
    public static let systemPrefixes = ["_", "systemd-"]

    /// The names an operator reserved beyond ``system`` (`serve --reserve-username`), as keys.
    public let added: Set<String>
    /// The look-alike forms of every reserved name.
    private let skeletons: Set<String>

    /// The default set, with `names` reserved too.
    public init(adding names: [String] = []) {
        added = Set(names.map(Username.key))
        skeletons = Set(Self.system.union(added).map(Username.skeleton))
    }

    /// Whether `name` (as typed or stored) is, or looks like, a reserved name.
    public func contains(_ name: String) -> Bool {
        let key = Username.key(name)
        return Self.system.contains(key) || added.contains(key) || Self.systemPrefixes.contains(where: key.hasPrefix)
            || !skeletons.isDisjoint(with: Username.skeletons(ofTyped: name))
    }

    /// Refuses a reserved name with `reserved_username` (HTTP 400).
    func check(_ name: String) throws(ProviderError) {
        guard !contains(name) else {
            throw ProviderError.badRequest(.reservedUsername, "this username is reserved for a host's own accounts; choose another")
        }
    }
}
