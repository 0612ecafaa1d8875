import Foundation
import LatchkeyProtocol
import LatchkeyOAuth

/// Text a person types that others will read: profile names and device names. Close to
/// the PRECIS FreeformClass (RFC 8264 §4.3) with its bidi concerns (§12.2 and RFC 5893):
/// normalised to NFC, trimmed, and refused when it holds
/// - controls, format characters (bidi embeddings, overrides, isolates and marks,
///   zero-width characters), line or paragraph separators, private-use or unassigned
///   code points, which change how the text shows rather than what it says;
/// - more than ``maximumCombiningRun`` combining marks in a row, so one letter cannot
///   carry thousands of marks ("Zalgo" text that stays one character to a length count);
/// - more than `maximumScalars` scalars, counted after normalisation, so the bound is on
///   what is stored, not on grapheme clusters.
enum FreeformText {
    static let maximumCombiningRun = 4

    static func validated(_ raw: String, field: String, maximumScalars: Int) throws(ProviderError) -> String {
        let text = raw.precomposedStringWithCanonicalMapping.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.unicodeScalars.count <= maximumScalars else {
            throw ProviderError.badRequest(.invalidRequest, "\(field) is longer than \(maximumScalars) characters")
        }
        var run = 0
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .unassigned:
                throw ProviderError.badRequest(.invalidRequest, "\(field) holds a control, format or unassigned character (U+\(String(scalar.value, radix: 16, uppercase: true)))")
            case .nonspacingMark, .enclosingMark, .spacingMark:
                run += 1
                guard run <= maximumCombiningRun else {
                    throw ProviderError.badRequest(.invalidRequest, "\(field) stacks more than \(maximumCombiningRun) combining marks on one character")
                }
            default:
                run = 0
            }
        }
        return text
    }
}
