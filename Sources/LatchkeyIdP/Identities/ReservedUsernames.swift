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
    /// The names every host keeps (``SystemAccountNames/names``).
    public static var system: Set<String> { SystemAccountNames.names }

    /// Prefixes Debian and systemd give their own accounts (``SystemAccountNames/prefixes``).
    public static var systemPrefixes: [String] { SystemAccountNames.prefixes }

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
