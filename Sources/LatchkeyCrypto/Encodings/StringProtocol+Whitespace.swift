/// White space trimmed from text's ends without Foundation's `CharacterSet`, whose
/// `trimmingCharacters(in:)` lives in swift-corelibs-foundation and brings ICU's 32 MiB of
/// data into every binary that links it (docs/PERFORMANCE.md, "The Debian package").
///
/// Both work on Unicode scalars, as `trimmingCharacters(in:)` does, and use Unicode's
/// `White_Space` property (UAX #44) and U+200B ZERO WIDTH SPACE, the set
/// `CharacterSet.whitespacesAndNewlines` holds (U+200B was a space separator before Unicode
/// 4.0.1, and CoreFoundation still counts it: text pasted with one still trims).
extension StringProtocol {
    /// The text without white space or line breaks at either end
    /// (`trimmingCharacters(in: .whitespacesAndNewlines)`).
    package func trimmingWhitespace() -> String {
        trimmingScalars(where: Self.isWhitespace)
    }

    /// The text without spaces or tabs at either end, line breaks kept
    /// (`trimmingCharacters(in: .whitespaces)`: `White_Space` less U+000A–U+000D, U+0085,
    /// U+2028 and U+2029).
    package func trimmingSpaces() -> String {
        trimmingScalars(where: { Self.isWhitespace($0) && !Self.isLineBreak($0) })
    }

    /// The text without line breaks at either end (`trimmingCharacters(in: .newlines)`).
    package func trimmingLineBreaks() -> String {
        trimmingScalars(where: Self.isLineBreak)
    }

    private static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.isWhitespace || scalar == "\u{200B}"
    }

    private static func isLineBreak(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A...0x0D, 0x85, 0x2028, 0x2029: true
        default: false
        }
    }

    /// The text without the scalars `isTrimmed` picks at either end.
    package func trimmingScalars(where isTrimmed: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isTrimmed($0) }),
              let last = scalars.lastIndex(where: { !isTrimmed($0) })
        else { return "" }
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}
