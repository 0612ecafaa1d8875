#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
package import LatchkeyCrypto

/// `JSONValue` through Latchkey's own reader and writer rather than `Codable`: an ID
/// token's claims are read on every sign-in and kept in the token cache's vault record
/// with it, and `JSONDecoder`/`JSONEncoder` cost several times the parse or the write
/// itself (docs/PERFORMANCE.md, "Less per request").
extension JSONValue {
    /// The value ``JSONReader`` read; nil when it holds a number no `Double` holds
    /// (`1e400`), which `JSONDecoder` refuses too.
    package init?(_ value: JSONReader.Value) {
        switch value {
        case .string(let text): self = .string(text)
        case .number(let text):
            guard let number = Double(text), number.isFinite else { return nil }
            self = .number(number)
        case .bool(let flag): self = .bool(flag)
        case .null: self = .null
        case .array(let elements):
            var values: [JSONValue] = []
            values.reserveCapacity(elements.count)
            for element in elements {
                guard let value = JSONValue(element) else { return nil }
                values.append(value)
            }
            self = .array(values)
        case .object(let members):
            var values: [String: JSONValue] = [:]
            values.reserveCapacity(members.count)
            for (name, member) in members {
                guard let value = JSONValue(member) else { return nil }
                values[name] = value
            }
            self = .object(values)
        }
    }

    /// This value as JSON text, appended: objects' members in the order of their names'
    /// UTF-8 bytes, as `JSONEncoder` with `.sortedKeys` writes them, strings escaped as
    /// ``JSONObjectWriter/appendQuoted(_:to:)`` escapes them. Throws for a number that
    /// is not finite, which JSON cannot spell (``JSONObjectWriter/appendNumber(_:to:)``).
    package func appendJSON(to bytes: inout [UInt8]) throws {
        switch self {
        case .string(let text): JSONObjectWriter.appendQuoted(text, to: &bytes)
        case .number(let number): try JSONObjectWriter.appendNumber(number, to: &bytes)
        case .bool(let flag): JSONObjectWriter.appendBool(flag, to: &bytes)
        case .null: JSONObjectWriter.appendNull(to: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                try element.appendJSON(to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            try Self.appendObject(members, to: &bytes)
        }
    }

    /// `members` as a JSON object (``appendJSON(to:)``).
    package static func appendObject(_ members: [String: JSONValue], to bytes: inout [UInt8]) throws {
        bytes.append(UInt8(ascii: "{"))
        for (index, name) in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            JSONObjectWriter.appendQuoted(name, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            try members[name]!.appendJSON(to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }
}
