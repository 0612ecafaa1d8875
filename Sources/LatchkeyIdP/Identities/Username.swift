import Foundation

/// How the provider accepts, compares and keeps usernames apart, so one user cannot pose
/// as another with a name that looks the same.
///
/// - Accepted (after trimming spaces at the ends): 1 to 256 bytes of UTF-8, no controls,
///   no format characters (zero-width joiners, bidi overrides: RFC 8264 §9.8 and §9.11
///   disallow them), no other whitespace inside, nothing unassigned or private-use, and
///   letters from at most one of the Latin, Greek and Cyrillic scripts (UTS #39 §5.2's
///   "highly restrictive" level forbids exactly these mixtures, the source of most
///   look-alike names).
/// - Compared by ``key(_:)``: NFKC and lowercase (RFC 8265 §3.4's width mapping, case
///   mapping and normalisation), so `ＡＤＡ`, `Ada` and `ada` are one name, for
///   uniqueness and for lookups (login hints, recovery).
/// - Kept apart by ``skeleton(_:)`` (UTS #39 §4): a new name whose skeleton matches an
///   existing one is refused as taken, so the all-Cyrillic `асе` cannot sit beside `ace`.
///   The confusable table is a built-in subset of UTS #39's `confusables.txt` (Greek and
///   Cyrillic letters that look Latin, `0`/`o` and `1`/`l`), not the whole file.
enum Username {
    /// The name as stored: trimmed and NFKC-normalised, with its case kept for display.
    static func validated(_ raw: String) throws(ProviderError) -> String {
        let name = raw.trimmingCharacters(in: .whitespaces).precomposedStringWithCompatibilityMapping
        guard !name.isEmpty, name.utf8.count <= 256 else {
            throw ProviderError.badRequest("invalid_request", "username must be 1-256 bytes")
        }
        for scalar in name.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .unassigned, .privateUse, .surrogate, .lineSeparator, .paragraphSeparator, .spaceSeparator:
                throw ProviderError.badRequest("invalid_request", "username may not contain spaces, control, format or unassigned characters")
            default:
                continue
            }
        }
        let scripts = Set(name.unicodeScalars.compactMap(script))
        guard scripts.count <= 1 else {
            throw ProviderError.badRequest("invalid_request", "username mixes Latin, Greek or Cyrillic letters")
        }
        return name
    }

    /// The form two names are compared in: NFKC, lowercased.
    static func key(_ name: String) -> String {
        name.precomposedStringWithCompatibilityMapping.lowercased()
    }

    /// The look-alike form: the key with each confusable letter replaced by its Latin
    /// prototype.
    static func skeleton(_ name: String) -> String {
        String(String.UnicodeScalarView(key(name).unicodeScalars.map { confusables[$0] ?? $0 }))
    }

    private enum Script { case latin, greek, cyrillic }

    private static func script(_ scalar: Unicode.Scalar) -> Script? {
        guard scalar.properties.isAlphabetic else { return nil }
        switch scalar.value {
        case 0x41...0x5A, 0x61...0x7A, 0xC0...0x24F, 0x1E00...0x1EFF: return .latin
        case 0x370...0x3FF, 0x1F00...0x1FFF: return .greek
        case 0x400...0x52F, 0x1C80...0x1C8F, 0x2DE0...0x2DFF, 0xA640...0xA69F: return .cyrillic
        default: return nil
        }
    }

    /// Lowercase look-alikes and their Latin prototypes (after `lowercased()`).
    private static let confusables: [Unicode.Scalar: Unicode.Scalar] = {
        let pairs: [(UInt32, Character)] = [
            // Cyrillic
            (0x430, "a"), (0x441, "c"), (0x501, "d"), (0x435, "e"), (0x4BB, "h"), (0x456, "i"), (0x458, "j"),
            (0x4CF, "l"), (0x43E, "o"), (0x440, "p"), (0x51B, "q"), (0x455, "s"), (0x443, "y"), (0x445, "x"),
            (0x51D, "w"), (0x432, "b"), (0x43A, "k"), (0x43C, "m"), (0x43D, "h"), (0x442, "t"),
            // Greek
            (0x3B1, "a"), (0x3B2, "b"), (0x3B5, "e"), (0x3B7, "n"), (0x3B9, "i"), (0x3BA, "k"), (0x3BD, "v"),
            (0x3BF, "o"), (0x3C1, "p"), (0x3C4, "t"), (0x3C5, "u"), (0x3C7, "x"), (0x3B3, "y"), (0x3B6, "z"),
            // Digits that pass for letters
            (0x30, "o"), (0x31, "l"),
        ]
        var table: [Unicode.Scalar: Unicode.Scalar] = [:]
        for (value, latin) in pairs {
            if let scalar = Unicode.Scalar(value), let prototype = latin.unicodeScalars.first { table[scalar] = prototype }
        }
        return table
    }()
}
