#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The metadata of a vault record the facade keeps besides credentials (a client key, a
/// DPoP key with its tokens, an attestation key): JSON with a `kind` that tells the
/// records apart, sealed in the vault like every record's metadata.
protocol VaultRecordMetadata: Codable {
    /// The `kind` this type's records carry.
    static var kind: String { get }
    var kind: String { get }
    /// The metadata to store (`Codable`'s unless the type writes its own).
    func encoded() throws -> Data
    /// The record's metadata, or nil when the entry is another kind of record.
    static func decode(_ data: Data) -> Self?
}

extension VaultRecordMetadata {
    /// The metadata to store: sorted keys, so equal records encode alike.
    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(self)
    }

    /// The record's metadata, or nil when the entry is another kind of record.
    static func decode(_ data: Data) -> Self? {
        guard let record = try? JSONDecoder().decode(Self.self, from: data), record.kind == kind else { return nil }
        return record
    }
}
