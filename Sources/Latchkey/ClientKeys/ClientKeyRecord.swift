import Foundation

/// The metadata of a client key's vault record (``ClientKey``): which provider and client
/// the key authenticates, sealed in the vault like every record's metadata. One record
/// per (issuer, client id).
struct ClientKeyRecord: Codable, Sendable {
    /// Marks client key records among the vault's records.
    static let kind = "client-key"

    var kind: String
    var issuer: String
    var clientID: String

    init(issuer: String, clientID: String) {
        kind = Self.kind
        self.issuer = issuer
        self.clientID = clientID
    }

    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(self)
    }

    /// The record's metadata, or nil when the entry is not a client key record.
    static func decode(_ data: Data) -> ClientKeyRecord? {
        guard let record = try? JSONDecoder().decode(ClientKeyRecord.self, from: data), record.kind == kind else { return nil }
        return record
    }
}
