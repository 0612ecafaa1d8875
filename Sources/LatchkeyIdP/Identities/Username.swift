import Foundation
import LatchkeyProtocol
import LatchkeyOAuth

/// How the provider accepts, compares and keeps usernames apart, so one user cannot pose
/// as another with a name that looks the same (docs/SECURITY.md, "Usernames").
///
/// - Accepted (after trimming spaces at the ends): 1 to 256 bytes of UTF-8, no controls,
///   no format characters (zero-width joiners, bidi overrides: RFC 8264 §9.8 and §9.11
///   disallow them), no other whitespace inside, nothing unassigned or private-use, and
///   UTS #39 §5.2's "highly restrictive" level over every script (``UnicodeScripts``):
///   one script, or Latin with Han and Kana, Han and Bopomofo, or Han and Hangul.
/// - Compared by ``key(_:)``: NFKC and lowercase (RFC 8265 §3.4's width mapping, case
///   mapping and normalisation), so `ＡＤＡ`, `Ada` and `ada` are one name, for
///   uniqueness and for lookups (login hints, recovery, decoys).
/// - Kept apart by ``skeleton(_:)`` (UTS #39 §4, over Unicode's whole confusables table,
///   ``Confusables``): a new name whose skeleton matches an existing one is refused as
///   taken, so `ɑda` cannot sit beside `ada`, nor `rnodern` beside `modern`.
enum Username {
    /// The name as stored: trimmed and NFKC-normalised, with its case kept for display.
    static func validated(_ raw: String) throws(ProviderError) -> String {
        let name = raw.trimmingCharacters(in: .whitespaces).precomposedStringWithCompatibilityMapping
        guard !name.isEmpty, name.utf8.count <= 256 else {
            throw ProviderError.badRequest(.invalidRequest, "username must be 1-256 bytes")
        }
        for scalar in name.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .unassigned, .privateUse, .surrogate, .lineSeparator, .paragraphSeparator, .spaceSeparator:
                throw ProviderError.badRequest(.invalidRequest, "username may not contain spaces, control, format or unassigned characters")
            default:
                continue
            }
        }
        guard UnicodeScripts.isHighlyRestrictive(name) else {
            let scripts = UnicodeScripts.scriptCodes(name).joined(separator: ", ")
            throw ProviderError.badRequest(.invalidRequest, "username mixes scripts (\(scripts)); use one, or Latin with Han and Kana, Bopomofo or Hangul")
        }
        return name
    }

    /// The form two names are compared in: NFKC, lowercased.
    static func key(_ name: String) -> String {
        name.precomposedStringWithCompatibilityMapping.lowercased()
    }

    /// The look-alike form: the UTS #39 skeleton of the name as shown (its case kept, so
    /// `I` meets `l`), lowercased so case never tells two names apart, and skeletonised
    /// again, since lowercasing can bring out a further confusable.
    static func skeleton(_ name: String) -> String {
        let shown = name.precomposedStringWithCompatibilityMapping
        return Confusables.skeleton(Confusables.skeleton(shown).lowercased())
    }

    /// The skeletons a name as typed is checked against, before it is stored: the stored
    /// form's, and that of the text as typed, since NFKC can turn a look-alike into a
    /// character that no longer looks like anything (`ϲ`, U+03F2, becomes `ς`), and the
    /// typed name is what its owner meant to pass off.
    static func skeletons(ofTyped typed: String) -> [String] {
        let trimmed = typed.trimmingCharacters(in: .whitespaces)
        let asTyped = Confusables.skeleton(Confusables.skeleton(trimmed).lowercased())
        let stored = skeleton(trimmed)
        return asTyped == stored ? [stored] : [stored, asTyped]
    }

    /// The version of the skeleton rule, recorded in the store: a store whose identities'
    /// skeletons were made by another rule has them remade at start (``SkeletonRefresh``).
    static let skeletonRule = "uts39-\(UnicodeSecurityData.confusablesVersion)-shown-lower-1"
}
