package import Foundation

/// The one JSON shape vault records have: a single object whose values are strings or
/// numbers (no nesting, no other values), read by ``JSONReader`` (RFC 8259's grammar, a
/// name given twice refused). Listing a vault parses thousands of records, and
/// Foundation's JSON decoders cost ~10 µs a record, most of a 10,000-key listing's budget;
/// this costs ~1 µs. Anything outside the shape is an error, never a guess. DPoP proof
/// claims have the same shape (LatchkeyOAuth's `DPoPProofVerifier`), hence `package`.
package struct FlatJSONObject {
    enum Value: Equatable {
        case string(String)
        case number(Double)
    }

    /// The members by name.
    private let members: [String: Value]

    struct Malformed: Error {}

    /// The longest number text taken: a record's numbers are times and counts.
    private static let maximumNumberLength = 32

    package init(parsing data: Data) throws {
        guard case .object(let read)? = try? JSONReader.parse(data) else { throw Malformed() }
        var members: [String: Value] = [:]
        members.reserveCapacity(read.count)
        for (name, value) in read {
            switch value {
            case .string(let text):
                members[name] = .string(text)
            case .number(let text):
                guard text.utf8.count <= Self.maximumNumberLength, let number = Double(text), number.isFinite else { throw Malformed() }
                members[name] = .number(number)
            default:
                throw Malformed()
            }
        }
        self.members = members
    }

    package func string(_ name: String) -> String? {
        if case .string(let value)? = members[name] { return value }
        return nil
    }

    package func number(_ name: String) -> Double? {
        if case .number(let value)? = members[name] { return value }
        return nil
    }
}
