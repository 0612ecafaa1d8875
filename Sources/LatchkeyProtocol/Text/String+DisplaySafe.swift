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

    /// Text from outside (a request value, a user name, a header) made safe for one field
    /// of a line of text log: the same scalars as ``displaySafe(maximumLength:)`` refuses,
    /// and the backslash that introduces the escapes, are written as escapes (`\n`, `\r`,
    /// `\t`, `\\`, `\u{1B}`), so a value can neither forge a line of its own nor drive the
    /// terminal of an operator reading the log; nothing is lost, the escape names the
    /// scalar. Used by the provider's text logs (docs/SECURITY.md, "Logs").
    public func logSafe(maximumLength: Int = 1024) -> String {
        // Most values (ids, routes, error codes) are printable ASCII without a backslash,
        // which need no escape: one pass over the bytes instead of a scalar walk that
        // looks up each scalar's general category (a log line per request made that walk
        // a few percent of the provider's CPU).
        if utf8.count <= maximumLength, utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }) {
            return self
        }
        var escaped = ""
        escaped.unicodeScalars.reserveCapacity(Swift.min(unicodeScalars.count, maximumLength))
        var count = 0
        for scalar in unicodeScalars {
            if count == maximumLength {
                escaped += "…"
                break
            }
            count += 1
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case "\\": escaped += "\\\\"
            case _ where scalar.isUnsafeOnTerminal: escaped += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
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
