#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif
package import LatchkeyCrypto

/// The members of one object of a JSON text read by ``JSONReader``, taken out by name
/// with the same rules and messages as the `Codable` path (`WebAuthnJSON.describe`): a
/// missing member is "missing a.b", a member of the wrong kind "bad a.b"; members nobody
/// asks for are ignored, as `Decodable` ignores them. The vault's metadata records
/// (``CredentialMetadata``, the token cache's record in `Latchkey`) are read with it too.
package struct JSONMembers {
    private let members: [String: JSONReader.Value]
    /// Where this object sits, for messages: `response.` inside the response.
    private let path: String

    package init(_ value: JSONReader.Value, path: String = "") throws {
        guard case .object(let members) = value else { throw Self.bad(path.isEmpty ? "the text" : String(path.dropLast()), "not an object") }
        self.members = members
        self.path = path
    }

    /// The object `bytes` holds (``JSONReader``, so names given twice are refused); the
    /// caller bounds the size.
    package static func parse(_ bytes: some DataProtocol) throws -> JSONMembers {
        try JSONMembers(try JSONReader.parse(bytes))
    }

    /// What was wrong, naming the member, never its value.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    package static func bad(_ name: String, _ why: String) -> Failure {
        Failure(description: "bad \(name): \(why)")
    }

    private func missing(_ name: String) -> Failure {
        Failure(description: "missing \(path)\(name)")
    }

    /// A member that must be present and not null.
    private func required(_ name: String) throws -> JSONReader.Value {
        guard let value = members[name], value != .null else { throw missing(name) }
        return value
    }

    package func string(_ name: String) throws -> String {
        guard let text = try required(name).string else { throw Self.bad(path + name, "not a string") }
        return text
    }

    /// Absent or null: nil.
    package func optionalString(_ name: String) throws -> String? {
        guard let value = members[name], value != .null else { return nil }
        guard let text = value.string else { throw Self.bad(path + name, "not a string") }
        return text
    }

    /// Base64url without padding, as ``Base64URLBytes`` reads it.
    func bytes(_ name: String) throws -> Base64URLBytes {
        try Self.base64URL(try string(name), path + name)
    }

    func optionalBytes(_ name: String) throws -> Base64URLBytes? {
        try optionalString(name).map { try Self.base64URL($0, path + name) }
    }

    func object(_ name: String) throws -> JSONMembers {
        try JSONMembers(try required(name), path: path + name + ".")
    }

    /// A finite number (`JSONDecoder` refuses one a `Double` cannot hold, such as `1e400`).
    package func number(_ name: String) throws -> Double {
        try Self.number(try required(name), path + name)
    }

    /// Absent or null: nil.
    package func optionalNumber(_ name: String) throws -> Double? {
        guard let value = members[name], value != .null else { return nil }
        return try Self.number(value, path + name)
    }

    /// A whole number from 0 to `UInt32.max` (`5` or `5.0`, as `JSONDecoder` reads one).
    package func unsigned32(_ name: String) throws -> UInt32 {
        guard case .number(let text) = try required(name) else { throw Self.bad(path + name, "not a number") }
        if let value = UInt32(text) { return value }
        guard let value = Double(text), let exact = UInt32(exactly: value) else { throw Self.bad(path + name, "not a 32-bit unsigned integer") }
        return exact
    }

    /// An array of strings.
    package func strings(_ name: String) throws -> [String] {
        guard case .array(let elements) = try required(name) else { throw Self.bad(path + name, "not an array") }
        return try elements.map { element in
            guard let text = element.string else { throw Self.bad(path + name, "an element is not a string") }
            return text
        }
    }

    /// An object whose members are all strings.
    package func stringMap(_ name: String) throws -> [String: String] {
        guard case .object(let members) = try required(name) else { throw Self.bad(path + name, "not an object") }
        return try members.mapValues { value in
            guard let text = value.string else { throw Self.bad(path + name, "a member is not a string") }
            return text
        }
    }

    /// An array of objects.
    package func objects(_ name: String) throws -> [JSONMembers] {
        guard case .array(let elements) = try required(name) else { throw Self.bad(path + name, "not an array") }
        return try elements.map { try JSONMembers($0, path: path + name + "[].") }
    }

    /// The member as it was read, whatever its kind; absent or null: nil.
    package func optionalValue(_ name: String) -> JSONReader.Value? {
        guard let value = members[name], value != .null else { return nil }
        return value
    }

    private static func number(_ value: JSONReader.Value, _ name: String) throws -> Double {
        guard case .number(let text) = value else { throw bad(name, "not a number") }
        guard let number = Double(text), number.isFinite else { throw bad(name, "out of a Double's range") }
        return number
    }

    private static func base64URL(_ text: String, _ name: String) throws -> Base64URLBytes {
        guard let bytes = Base64URLBytes(base64URL: text) else { throw bad(name, "not base64url") }
        return bytes
    }
}
