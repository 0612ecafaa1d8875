import Foundation
import LatchkeyCrypto

/// The members of one object of a JSON text read by ``JSONReader``, taken out by name
/// with the same rules and messages as the `Codable` path (`WebAuthnJSON.describe`): a
/// missing member is "missing a.b", a member of the wrong kind "bad a.b"; members nobody
/// asks for are ignored, as `Decodable` ignores them.
struct JSONMembers {
    private let members: [String: JSONReader.Value]
    /// Where this object sits, for messages: `response.` inside the response.
    private let path: String

    init(_ value: JSONReader.Value, path: String = "") throws {
        guard case .object(let members) = value else { throw Self.bad(path.isEmpty ? "the text" : String(path.dropLast()), "not an object") }
        self.members = members
        self.path = path
    }

    /// What was wrong, naming the member, never its value.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func bad(_ name: String, _ why: String) -> Failure {
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

    func string(_ name: String) throws -> String {
        guard let text = try required(name).string else { throw Self.bad(path + name, "not a string") }
        return text
    }

    /// Absent or null: nil.
    func optionalString(_ name: String) throws -> String? {
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

    private static func base64URL(_ text: String, _ name: String) throws -> Base64URLBytes {
        guard let bytes = Base64URLBytes(base64URL: text) else { throw bad(name, "not base64url") }
        return bytes
    }
}
