#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Reading members without casts, and writing documents as literals: `claims["cnf"]?["jkt"]`,
/// `["username": "ada", "limit": 10]`. For provider answers a caller only partly models
/// and for tests that build hostile documents. (No nil literal: `null` is written `.null`,
/// so an absent member and a JSON null never look alike.)
extension JSONValue: ExpressibleByStringInterpolation, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }

    /// A repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// The member `key` of an object; nil for another value or a missing member. Set on
    /// an object, it adds, replaces or (with nil) removes the member; set on any other
    /// value, it changes nothing.
    public subscript(key: String) -> JSONValue? {
        get { objectValue?[key] }
        set {
            guard case .object(var members) = self else { return }
            members[key] = newValue
            self = .object(members)
        }
    }

    /// The element at `index` of an array; nil for another value or an index outside it.
    public subscript(index: Int) -> JSONValue? {
        guard let array = arrayValue, array.indices.contains(index) else { return nil }
        return array[index]
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// A number that is a whole `Int`.
    public var intValue: Int? {
        numberValue.flatMap { Int(exactly: $0) }
    }

    /// Any JSON text, bounded in size (1 MiB by default).
    public init(json data: Data, maximumSize: Int = 1 << 20) throws {
        guard data.count <= maximumSize else {
            throw OAuthError.responseTooLarge(reason: "JSON over \(maximumSize) bytes")
        }
        do {
            self = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw OAuthError.malformedResponse(reason: "not JSON", underlying: error)
        }
    }

    /// The value as JSON text, members in sorted order.
    public func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }
}
