import Foundation

/// The Script and Script_Extensions properties (UAX #24) from the UCD (generated into
/// ``UnicodeSecurityData``), and UTS #39 §5's resolved script set and "highly
/// restrictive" level, for every script rather than a chosen few.
enum UnicodeScripts {
    private struct Range {
        let first: UInt32
        let last: UInt32
        let scripts: Set<String>
    }

    private static func parse(_ text: String) -> [Range] {
        text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 3, let first = UInt32(fields[0], radix: 16), let last = UInt32(fields[1], radix: 16) else { return nil }
            return Range(first: first, last: last, scripts: Set(fields.dropFirst(2).map(String.init)))
        }
    }

    private static let scripts = parse(UnicodeSecurityData.scripts)
    private static let extensions = parse(UnicodeSecurityData.scriptExtensions)

    private static func lookup(_ value: UInt32, in ranges: [Range]) -> Set<String>? {
        var low = 0
        var high = ranges.count - 1
        while low <= high {
            let middle = (low + high) / 2
            let range = ranges[middle]
            if value < range.first {
                high = middle - 1
            } else if value > range.last {
                low = middle + 1
            } else {
                return range.scripts
            }
        }
        return nil
    }

    /// Common (`Zyyy`) and Inherited (`Zinh`) characters go with any script.
    private static let anyScript: Set<String> = ["Zyyy", "Zinh"]

    /// A character's augmented script set (UTS #39 §5.1): its Script_Extensions, else its
    /// Script, with Han, Hiragana, Katakana, Hangul and Bopomofo widened to the writing
    /// systems that combine them (`Hanb`, `Jpan`, `Kore`). Nil for a Common or Inherited
    /// character, whose set is every script; `Zzzz` for an unassigned one.
    static func augmentedSet(_ scalar: Unicode.Scalar) -> Set<String>? {
        var set = lookup(scalar.value, in: extensions) ?? lookup(scalar.value, in: scripts) ?? ["Zzzz"]
        if !set.isDisjoint(with: anyScript) { return nil }
        if set.contains("Hani") { set.formUnion(["Hanb", "Jpan", "Kore"]) }
        if set.contains("Hira") || set.contains("Kana") { set.insert("Jpan") }
        if set.contains("Hang") { set.insert("Kore") }
        if set.contains("Bopo") { set.insert("Hanb") }
        return set
    }

    /// The resolved script set (UTS #39 §5.1): the intersection of the characters'
    /// augmented sets; nil means every script (no character had a script of its own).
    static func resolvedSet(_ scalars: some Sequence<Unicode.Scalar>) -> Set<String>? {
        var resolved: Set<String>?
        for scalar in scalars {
            guard let set = augmentedSet(scalar) else { continue }
            resolved = resolved.map { $0.intersection(set) } ?? set
        }
        return resolved
    }

    /// UTS #39 §5.2 "highly restrictive": one script, or Latin with Han and Kana (Japanese),
    /// Han and Bopomofo, or Han and Hangul (Korean); nothing else mixes.
    static func isHighlyRestrictive(_ text: String) -> Bool {
        guard let resolved = resolvedSet(text.unicodeScalars) else { return true }
        if !resolved.isEmpty { return true }
        let withoutLatin = text.unicodeScalars.filter { augmentedSet($0)?.contains("Latn") != true }
        guard let rest = resolvedSet(withoutLatin) else { return true }
        return !rest.isDisjoint(with: ["Jpan", "Kore", "Hanb"])
    }

    /// The scripts a string's letters come from (codes, sorted), for messages.
    static func scriptCodes(_ text: String) -> [String] {
        var codes = Set<String>()
        for scalar in text.unicodeScalars {
            if let set = lookup(scalar.value, in: scripts), set.isDisjoint(with: anyScript) { codes.formUnion(set) }
        }
        return codes.sorted()
    }
}
