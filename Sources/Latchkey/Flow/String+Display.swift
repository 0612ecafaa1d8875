extension String {
    /// Text from a provider made safe to show: control characters (which could drive a
    /// terminal) and bidirectional overrides (which could make "evil" read as "live")
    /// become U+FFFD, and the length is bounded. Public so a command-line tool prints
    /// provider text through the same rule.
    public func displaySafe(maximumLength: Int) -> String {
        String(String.UnicodeScalarView(unicodeScalars.prefix(maximumLength).map { scalar in
            let value = scalar.value
            let control = value < 0x20 || (0x7F...0x9F).contains(value)
            let bidi = (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value) || value == 0x200E || value == 0x200F || value == 0x061C
            return control || bidi ? "\u{FFFD}" : scalar
        }))
    }
}
