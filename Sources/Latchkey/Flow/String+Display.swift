extension String {
    /// Text from outside (a provider, an ID token, the vault) made safe to show on a
    /// terminal: every scalar ``Swift/Unicode/Scalar/isUnsafeOnTerminal`` calls unsafe
    /// becomes U+FFFD, and the length is bounded (in scalars). Public so a command-line
    /// tool prints such text through the same rule (docs/SECURITY.md, "What the terminal
    /// shows"). The library keeps raw values; only what is shown goes through this.
    public func displaySafe(maximumLength: Int) -> String {
        String(String.UnicodeScalarView(unicodeScalars.prefix(maximumLength).map { scalar in
            scalar.isUnsafeOnTerminal ? "\u{FFFD}" : scalar
        }))
    }
}

extension Unicode.Scalar {
    /// Whether this scalar may change what a terminal does or the order in which a reader
    /// sees text, rather than being text itself:
    /// - C0 and C1 controls, ESC and DEL (general category Cc): cursor moves, title
    ///   changes, screen clears, OSC hyperlinks;
    /// - format characters (Cf), which include the bidirectional embeddings, overrides and
    ///   isolates (U+202A–U+202E, U+2066–U+2069), the marks U+200E, U+200F and U+061C,
    ///   zero-width characters and the tag characters: they reorder or hide text;
    /// - the line and paragraph separators U+2028 and U+2029 (Zl, Zp), which break lines.
    public var isUnsafeOnTerminal: Bool {
        switch properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }
}
