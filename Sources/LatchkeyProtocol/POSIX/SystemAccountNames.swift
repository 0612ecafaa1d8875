/// Names a Linux host keeps for its own system and administrative accounts and groups
/// (docs/SECURITY.md, "Reserved names"). The provider never lets an identity take one
/// (`ReservedUsernames`, which adds look-alikes and an operator's own), and a host
/// (`latchkey host`) never serves a directory account or group by one of these names.
public enum SystemAccountNames {
    /// Debian's base-passwd users and groups (`/usr/share/base-passwd/passwd.master` and
    /// `group.master` of base-passwd 3.6, with `gnats` from older releases), the names
    /// other distributions and common packages use for their administrators and daemons,
    /// and groups that hand out root by another door (`docker`, `lxd`, `libvirt`, `disk`).
    public static let names: Set<String> = [
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
    public static let prefixes = ["_", "systemd-"]

    /// Whether `name`, exactly as given, is one of ``names`` or starts with a ``prefixes``.
    public static func contains(_ name: String) -> Bool {
        names.contains(name) || prefixes.contains(where: name.hasPrefix)
    }
}
