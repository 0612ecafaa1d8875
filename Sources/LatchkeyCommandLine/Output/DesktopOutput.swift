/// `desktop install --json` and `desktop uninstall --json`.
struct DesktopOutput: Encodable {
    var scheme: String
    /// The desktop entry's path.
    var desktopEntry: String
    /// Whether anything changed (false when it was already as asked).
    var changed: Bool
    /// One sentence per step.
    var steps: [String]
}
