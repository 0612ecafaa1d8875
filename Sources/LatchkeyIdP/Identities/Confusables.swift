import Foundation

/// UTS #39 §4 skeletons over Unicode's whole `confusables.txt` (generated into
/// ``UnicodeSecurityData``; version in ``UnicodeSecurityData/confusablesVersion``): two
/// strings are confusable when their skeletons are equal.
enum Confusables {
    /// Source code point → its prototype, parsed once.
    private static let prototypes: [UInt32: [Unicode.Scalar]] = {
        var table: [UInt32: [Unicode.Scalar]] = [:]
        table.reserveCapacity(6400)
        for line in UnicodeSecurityData.confusables.split(separator: "\n") {
            let fields = line.split(separator: " ").compactMap { UInt32($0, radix: 16) }
            guard let source = fields.first else { continue }
            table[source] = fields.dropFirst().compactMap(Unicode.Scalar.init)
        }
        return table
    }()

    /// `skeleton(X)` of UTS #39 §4: NFD, each code point replaced by its prototype, NFD
    /// again.
    static func skeleton(_ text: String) -> String {
        var mapped = String.UnicodeScalarView()
        for scalar in text.decomposedStringWithCanonicalMapping.unicodeScalars {
            if let prototype = prototypes[scalar.value] {
                mapped.append(contentsOf: prototype)
            } else {
                mapped.append(scalar)
            }
        }
        return String(mapped).decomposedStringWithCanonicalMapping
    }
}
